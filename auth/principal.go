package auth

import (
	"crypto/tls"
	"fmt"
	"regexp"
	"strings"
)

// The rule grammar of Kafka's SslPrincipalMapper, kept verbatim so that a
// rules string splits and parses here as it does there: DEFAULT, or
// RULE:pattern/replacement/ with an optional L or U, rules separated by
// commas.
const rulePattern = `(DEFAULT)|RULE:((\\.|[^\\/])*)/((\\.|[^\\/])*)/([LU]?).*?|(.*?)`

var (
	ruleSplitter = regexp.MustCompile(`\s*(` + rulePattern + `)\s*(,\s*|$)`)
	ruleParser   = regexp.MustCompile(`^(?:` + rulePattern + `)`)
)

// PrincipalMapper maps a certificate's distinguished name to a principal
// name with Kafka's ssl.principal.mapping.rules: the first rule whose
// pattern matches the whole name rewrites it (L or U then lower- or
// upper-cases the result); DEFAULT keeps the name as it is. Patterns are
// Go regular expressions, which are Java's without backreferences and
// lookaround.
type PrincipalMapper struct {
	rules []principalRule
}

type principalRule struct {
	isDefault   bool
	pattern     *regexp.Regexp
	whole       *regexp.Regexp // pattern anchored at both ends: Java's matches()
	replacement string
	lower       bool
	upper       bool
}

// ErrNoMatchingRule is returned by Map when no rule applies.
var ErrNoMatchingRule = fmt.Errorf("auth: no ssl.principal.mapping.rules rule applies")

// ParsePrincipalRules parses ssl.principal.mapping.rules ("" is no rules at
// all, so every name fails to map; Kafka's default value is "DEFAULT").
func ParsePrincipalRules(rules string) (*PrincipalMapper, error) {
	m := &PrincipalMapper{}
	for _, sm := range ruleSplitter.FindAllStringSubmatch(strings.TrimSpace(rules), -1) {
		rule := sm[1]
		pm := ruleParser.FindStringSubmatchIndex(rule)
		if pm == nil || pm[1] != len(rule) {
			return nil, fmt.Errorf("auth: invalid ssl.principal.mapping.rules rule %q", rule)
		}
		group := func(i int) (string, bool) {
			if pm[2*i] < 0 {
				return "", false
			}
			return rule[pm[2*i]:pm[2*i+1]], true
		}
		if _, ok := group(1); ok {
			m.rules = append(m.rules, principalRule{isDefault: true})
			continue
		}
		pat, ok := group(2)
		if !ok {
			continue // an empty rule is ignored, as in Kafka
		}
		repl, _ := group(4)
		flag, _ := group(6)
		re, err := regexp.Compile(pat)
		if err != nil {
			return nil, fmt.Errorf("auth: ssl.principal.mapping.rules rule %q: %w", rule, err)
		}
		// Anchoring can fail where the pattern did not: an unterminated
		// \Q quotes the anchors' syntax too.
		whole, err := regexp.Compile(`^(?:` + pat + `)$`)
		if err != nil || whole.NumSubexp() != re.NumSubexp() {
			return nil, fmt.Errorf("auth: ssl.principal.mapping.rules rule %q: pattern cannot be anchored", rule)
		}
		m.rules = append(m.rules, principalRule{
			pattern: re, whole: whole,
			replacement: repl, lower: flag == "L", upper: flag == "U",
		})
	}
	return m, nil
}

// Rules returns the rules as Kafka's Rule.toString writes them.
func (m *PrincipalMapper) Rules() []string {
	out := make([]string, 0, len(m.rules))
	for _, r := range m.rules {
		out = append(out, r.String())
	}
	return out
}

func (r principalRule) String() string {
	if r.isDefault {
		return "DEFAULT"
	}
	s := "RULE:" + r.pattern.String() + "/" + r.replacement
	switch {
	case r.lower:
		s += "/L"
	case r.upper:
		s += "/U"
	}
	return s
}

// Map returns the principal name of a distinguished name.
func (m *PrincipalMapper) Map(dn string) (string, error) {
	for _, r := range m.rules {
		if r.isDefault {
			return dn, nil
		}
		if !r.whole.MatchString(dn) {
			continue
		}
		out := r.replaceAll(dn)
		switch {
		case r.lower:
			out = strings.ToLower(out)
		case r.upper:
			out = strings.ToUpper(out)
		}
		return out, nil
	}
	return "", fmt.Errorf("%w: %q", ErrNoMatchingRule, dn)
}

// replaceAll is Java's String.replaceAll with Kafka's treatment of the
// replacement: $n refers to group n (taking more digits while the number
// stays a group), a reference beyond the groups is literal text, and a
// backslash quotes the next character.
func (r principalRule) replaceAll(s string) string {
	groups := r.pattern.NumSubexp()
	var sb strings.Builder
	last := 0
	for _, loc := range r.pattern.FindAllStringSubmatchIndex(s, -1) {
		sb.WriteString(s[last:loc[0]])
		expandJava(&sb, r.replacement, s, loc, groups)
		last = loc[1]
	}
	sb.WriteString(s[last:])
	return sb.String()
}

func expandJava(sb *strings.Builder, repl, s string, loc []int, groups int) {
	for i := 0; i < len(repl); i++ {
		c := repl[i]
		switch {
		case c == '\\' && i+1 < len(repl):
			i++
			sb.WriteByte(repl[i])
		case c == '$' && i+1 < len(repl) && isDigit(repl[i+1]) && int(repl[i+1]-'0') <= groups:
			n := int(repl[i+1] - '0')
			i++
			for i+1 < len(repl) && isDigit(repl[i+1]) && n*10+int(repl[i+1]-'0') <= groups {
				n = n*10 + int(repl[i+1]-'0')
				i++
			}
			if loc[2*n] >= 0 {
				sb.WriteString(s[loc[2*n]:loc[2*n+1]])
			}
		default:
			sb.WriteByte(c)
		}
	}
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// AnonymousPrincipal is the principal name of a connection that proved no
// identity: no client certificate on an SSL listener, or a PLAINTEXT one.
const AnonymousPrincipal = "ANONYMOUS"

// TLSPrincipal returns the principal name of a TLS connection as Kafka's
// DefaultKafkaPrincipalBuilder does: the client certificate's subject in
// RFC 2253 form, mapped by m, or ANONYMOUS when the client sent none.
func TLSPrincipal(state tls.ConnectionState, m *PrincipalMapper) (string, error) {
	if len(state.PeerCertificates) == 0 {
		return AnonymousPrincipal, nil
	}
	dn := state.PeerCertificates[0].Subject.ToRDNSequence().String()
	name, err := m.Map(dn)
	if err != nil {
		return "", err
	}
	if name == "" || len(name) > MaxNameLength {
		return "", fmt.Errorf("auth: principal of %q maps to an empty name or one longer than %d bytes", dn, MaxNameLength)
	}
	return name, nil
}
