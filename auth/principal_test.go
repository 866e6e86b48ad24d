package auth

import (
	"errors"
	"strings"
	"testing"
)

// The cases of Kafka's SslPrincipalMapperTest.

func TestPrincipalRulesValid(t *testing.T) {
	for _, rules := range []string{
		"DEFAULT",
		`RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/`,
		`RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L, DEFAULT`,
		`RULE:^CN=(.*?),OU=(.*?),O=(.*?),L=(.*?),ST=(.*?),C=(.*?)$/$1@$2/`,
		`RULE:^.*[Cc][Nn]=([a-zA-Z0-9.]*).*$/$1/L`,
		`RULE:^cn=(.?),ou=(.?),dc=(.?),dc=(.?)$/$1@$2/U`,
		`RULE:^CN=([^,ADEFLTU,]+)(,.*|$)/$1/`,
		`RULE:^CN=([^,DEFAULT,]+)(,.*|$)/$1/`,
	} {
		if _, err := ParsePrincipalRules(rules); err != nil {
			t.Errorf("%q: %v", rules, err)
		}
	}
}

func TestPrincipalRulesInvalid(t *testing.T) {
	for _, rules := range []string{
		"default",
		"DEFAUL",
		"DEFAULT/L",
		"DEFAULT/U",
		`RULE:CN=(.*?),OU=ServiceUsers.*/$1`,
		`rule:^CN=(.*?),OU=ServiceUsers.*$/$1/`,
		`RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L/U`,
		`RULE:^CN=(.*?),OU=ServiceUsers.*$/L`,
		`RULE:^CN=(.*?),OU=ServiceUsers.*$/U`,
		`RULE:^CN=(.*?),OU=ServiceUsers.*$/LU`,
	} {
		if m, err := ParsePrincipalRules(rules); err == nil {
			t.Errorf("%q parsed as %v", rules, m.Rules())
		}
	}
}

func TestPrincipalMapping(t *testing.T) {
	m, err := ParsePrincipalRules(strings.Join([]string{
		`RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L`,
		`RULE:^CN=(.*?),OU=(.*?),O=(.*?),L=(.*?),ST=(.*?),C=(.*?)$/$1@$2/L`,
		`RULE:^cn=(.*?),ou=(.*?),dc=(.*?),dc=(.*?)$/$1@$2/U`,
		`RULE:^.*[Cc][Nn]=([a-zA-Z0-9.]*).*$/$1/U`,
		"DEFAULT",
	}, ", "))
	if err != nil {
		t.Fatal(err)
	}
	for dn, want := range map[string]string{
		"CN=Duke,OU=ServiceUsers,O=Org,C=US":        "duke",
		"CN=Duke,OU=SME,O=mycp,L=Fulton,ST=MD,C=US": "duke@sme",
		"cn=duke,ou=sme,dc=mycp,dc=com":             "DUKE@SME",
		"cN=duke,OU=JavaSoft,O=Sun Microsystems":    "DUKE",
		"OU=JavaSoft,O=Sun Microsystems,C=US":       "OU=JavaSoft,O=Sun Microsystems,C=US",
	} {
		if got, err := m.Map(dn); err != nil || got != want {
			t.Errorf("%q: %q %v, want %q", dn, got, err, want)
		}
	}
	m, err = ParsePrincipalRules(`RULE:^CN=((\\, *|\w)+)(,.*|$)/$1/,DEFAULT`)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := m.Map(`CN=Tkac\, Adam,OU=ITZ,DC=geodis,DC=cz`); err != nil || got != `Tkac\, Adam` {
		t.Errorf("comma with whitespace: %q %v", got, err)
	}
	m, _ = ParsePrincipalRules(`RULE:^CN=(.*)$/$1$2\$x/`)
	if got, _ := m.Map("CN=a"); got != "a$2$x" {
		t.Errorf("reference beyond the groups: %q", got)
	}
	m, _ = ParsePrincipalRules(`RULE:^CN=(.*)$/$1/`)
	if _, err := m.Map("OU=a"); !errors.Is(err, ErrNoMatchingRule) {
		t.Errorf("no rule: %v", err)
	}
}

func TestPrincipalRulesSplitting(t *testing.T) {
	cases := []struct{ want, rules string }{
		{"[]", ""},
		{"[DEFAULT]", "DEFAULT"},
		{"[RULE:/]", "RULE://"},
		{"[RULE:/.*]", "RULE:/.*/"},
		{"[RULE:/.*/L]", "RULE:/.*/L"},
		{"[RULE:/, DEFAULT]", "RULE://,DEFAULT"},
		{"[RULE:/, DEFAULT]", "  RULE:// ,  DEFAULT  "},
		{"[RULE:   /     , DEFAULT]", "  RULE:   /     / ,  DEFAULT  "},
		{"[RULE:  /     /U, DEFAULT]", "  RULE:  /     /U   ,DEFAULT  "},
		{"[RULE:([A-Z]*)/$1/U, RULE:([a-z]+)/$1, DEFAULT]", "  RULE:([A-Z]*)/$1/U   ,RULE:([a-z]+)/$1/,   DEFAULT  "},
		{"[]", ",   , , ,      , , ,   "},
		{"[RULE:/, DEFAULT]", ",,RULE://,,,DEFAULT,,"},
		{"[RULE: /   , DEFAULT]", ",  , RULE: /   /    ,,,   DEFAULT, ,   "},
		{"[RULE:   /  /U, DEFAULT]", "     ,  , RULE:   /  /U    ,,  ,DEFAULT, ,"},
		{`[RULE:\/\\\(\)\n\t/\/\/]`, `RULE:\/\\\(\)\n\t/\/\//`},
		{`[RULE:\**\/+/*/L, RULE:\/*\**/**]`, `RULE:\**\/+/*/L,RULE:\/*\**/**/`},
		{`[RULE:,RULE:,/,RULE:,\//U, RULE:,/RULE:,, RULE:,RULE:,/L,RULE:,/L, RULE:, DEFAULT, /DEFAULT, DEFAULT]`,
			`RULE:,RULE:,/,RULE:,\//U,RULE:,/RULE:,/,RULE:,RULE:,/L,RULE:,/L,RULE:, DEFAULT, /DEFAULT/,DEFAULT`},
	}
	for _, tc := range cases {
		m, err := ParsePrincipalRules(tc.rules)
		if err != nil {
			t.Errorf("%q: %v", tc.rules, err)
			continue
		}
		if got := "[" + strings.Join(m.Rules(), ", ") + "]"; got != tc.want {
			t.Errorf("%q: %s, want %s", tc.rules, got, tc.want)
		}
	}
}

func FuzzPrincipalRules(f *testing.F) {
	f.Add(`RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L,DEFAULT`, "CN=Duke,OU=ServiceUsers,O=Org,C=US")
	f.Add(`RULE:\Q(/x/`, "(")
	f.Add(`RULE:(a)(b)/$12$0\$/U`, "ab")
	f.Fuzz(func(t *testing.T, rules, dn string) {
		m, err := ParsePrincipalRules(rules)
		if err != nil {
			return
		}
		_, _ = m.Map(dn)
		_ = m.Rules()
	})
}
