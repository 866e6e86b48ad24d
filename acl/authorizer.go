package acl

import (
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
)

// Config is the authorizer's configuration, Kafka's StandardAuthorizer
// settings.
type Config struct {
	// SuperUsers may do anything, whatever the ACLs say (super.users:
	// "User:alice;User:bob"; ParseSuperUsers reads that form).
	SuperUsers []string
	// AllowEveryoneIfNoACLFound allows an operation on a resource that no
	// binding at all applies to, whoever it is for
	// (allow.everyone.if.no.acl.found, default false).
	AllowEveryoneIfNoACLFound bool
}

// ParseSuperUsers reads Kafka's super.users value: principals separated
// by ';', blanks trimmed, each of the form type:name.
func ParseSuperUsers(s string) ([]string, error) {
	var out []string
	for _, v := range strings.Split(s, ";") {
		v = strings.TrimSpace(v)
		if v == "" {
			continue
		}
		if _, _, err := ParsePrincipal(v); err != nil {
			return nil, fmt.Errorf("acl: super.users: %w", err)
		}
		out = append(out, v)
	}
	return out, nil
}

// Authorizer decides operations as Kafka's StandardAuthorizer does. It is
// safe for concurrent use: decisions read an immutable index that Replace
// swaps atomically.
type Authorizer struct {
	super      map[string]bool
	allowNoACL bool
	idx        atomic.Pointer[index] // nil until the first Replace
}

// NewAuthorizer returns an authorizer that allows only super users until
// its first Replace, as Kafka's does before its initial load.
func NewAuthorizer(cfg Config) (*Authorizer, error) {
	a := &Authorizer{super: map[string]bool{}, allowNoACL: cfg.AllowEveryoneIfNoACLFound}
	for _, p := range cfg.SuperUsers {
		if _, _, err := ParsePrincipal(p); err != nil {
			return nil, fmt.Errorf("acl: super user: %w", err)
		}
		a.super[p] = true
	}
	return a, nil
}

// Replace makes bindings, as stored at revision, the ACLs the authorizer
// decides by. Bindings are assumed valid (Validate); duplicates count once.
func (a *Authorizer) Replace(bindings []Binding, revision int64) {
	a.idx.Store(newIndex(bindings, revision))
}

// Revision returns the revision of the last Replace; ok is false before it.
func (a *Authorizer) Revision() (rev int64, ok bool) {
	if x := a.idx.Load(); x != nil {
		return x.rev, true
	}
	return 0, false
}

// ACLs returns the bindings that match f, ordered by resource type, then
// name, pattern type and entry.
func (a *Authorizer) ACLs(f Filter) []Binding {
	x := a.idx.Load()
	if x == nil {
		return nil
	}
	var out []Binding
	for _, b := range x.all {
		if f.Matches(b) {
			out = append(out, b)
		}
	}
	return out
}

// Rule says why a Decision came out as it did.
type Rule int8

// The rules by which a decision is made.
const (
	RuleNotReady      Rule = iota // before the first Replace; denied
	RuleSuperUser                 // a super user; allowed
	RuleMatchingACL               // ACL holds the matching binding
	RuleNoACLs                    // no binding applies to the resource: the allow.everyone.if.no.acl.found default
	RuleNoMatchingACL             // bindings apply to the resource, none to this request; denied
)

// String names the rule as Kafka's authorizer audit log does, where it
// has one.
func (r Rule) String() string {
	switch r {
	case RuleNotReady:
		return "NotReady"
	case RuleSuperUser:
		return "SuperUser"
	case RuleMatchingACL:
		return "MatchingAcl"
	case RuleNoACLs:
		return "NoAclFound"
	case RuleNoMatchingACL:
		return "DefaultDeny"
	}
	return fmt.Sprintf("Rule(%d)", int8(r))
}

// Decision is one authorization's result and its reason, for the audit
// log and metrics.
type Decision struct {
	Allowed bool
	Rule    Rule
	ACL     Binding // the deciding binding when Rule is RuleMatchingACL
}

// Authorize reports whether principal, connected from host, may perform
// op on the resource of type rt named name.
func (a *Authorizer) Authorize(principal, host string, op Operation, rt ResourceType, name string) bool {
	return a.Decide(principal, host, op, rt, name).Allowed
}

// Decide is Authorize with the reason. The decision follows Kafka's
// StandardAuthorizerData: a super user is allowed; else, among the
// bindings whose pattern matches the resource (its literal name, the
// literal "*", every prefix), a matching DENY wins, then a matching
// ALLOW; with neither, the request is denied if any of those bindings
// exists (for whomever), else allow.everyone.if.no.acl.found decides.
//
// A binding matches when its principal is principal or "User:*", its host
// is host or "*", and its operation is op or ALL; an ALLOW of READ, WRITE,
// DELETE or ALTER also allows DESCRIBE, one of ALTER_CONFIGS also
// DESCRIBE_CONFIGS (a DENY implies nothing).
func (a *Authorizer) Decide(principal, host string, op Operation, rt ResourceType, name string) Decision {
	if a.super[principal] {
		return Decision{Allowed: true, Rule: RuleSuperUser}
	}
	x := a.idx.Load()
	if x == nil {
		return Decision{Rule: RuleNotReady}
	}
	var d decider
	d.principal, d.host, d.op = principal, host, op
	if t := x.types[rt]; t != nil && rt.Known() {
		t.visit(name, &d)
	}
	switch {
	case d.deny != nil:
		return Decision{Rule: RuleMatchingACL, ACL: *d.deny}
	case d.allow != nil:
		return Decision{Allowed: true, Rule: RuleMatchingACL, ACL: *d.allow}
	case d.seen:
		return Decision{Rule: RuleNoMatchingACL}
	default:
		return Decision{Allowed: a.allowNoACL, Rule: RuleNoACLs}
	}
}

// decider accumulates one decision over the bindings of a resource.
type decider struct {
	principal, host string
	op              Operation
	seen            bool // some binding applies to the resource
	allow, deny     *Binding
}

// consider weighs bindings; it reports true once a DENY decided.
func (d *decider) consider(bs []Binding) bool {
	for i := range bs {
		d.seen = true
		switch matchEntry(&bs[i].Entry, d.principal, d.host, d.op) {
		case PermissionDeny:
			d.deny = &bs[i]
			return true
		case PermissionAllow:
			d.allow = &bs[i]
		}
	}
	return false
}

// matchEntry is Kafka's findResult: the binding's permission if it
// applies to the request, else PermissionUnknown.
func matchEntry(e *Entry, principal, host string, op Operation) Permission {
	if e.Principal != principal && e.Principal != WildcardPrincipal {
		return PermissionUnknown
	}
	if e.Host != Wildcard && e.Host != host {
		return PermissionUnknown
	}
	if e.Operation != OpAll && e.Operation != op && !(e.Permission == PermissionAllow && implies(e.Operation, op)) {
		return PermissionUnknown
	}
	return e.Permission
}

// implies reports whether an ALLOW of have also allows want.
func implies(have, want Operation) bool {
	switch want {
	case OpDescribe:
		return have == OpRead || have == OpWrite || have == OpDelete || have == OpAlter
	case OpDescribeConfigs:
		return have == OpAlterConfigs
	}
	return false
}

// AuthorizeByResourceType reports whether principal may perform op on at
// least one resource of type rt, Kafka's Authorizer.authorizeByResourceType
// (InitProducerId of an idempotent producer asks it for WRITE on any
// topic): allowed if allowed on an arbitrary name (super users, a literal
// "*" ALLOW, the no-ACL default), else if some ALLOW binding of op or ALL
// is not dominated by a DENY of the same literal name or of a prefix of it.
func (a *Authorizer) AuthorizeByResourceType(principal, host string, op Operation, rt ResourceType) bool {
	if !op.Known() || op == OpAny || !rt.Known() || rt == ResourceAny {
		return false
	}
	if a.Authorize(principal, host, op, rt, "hardcode") {
		return true
	}
	x := a.idx.Load()
	if x == nil || x.types[rt] == nil {
		return false
	}
	denyLiteral, denyPrefix := map[string]bool{}, map[string]bool{}
	var allowLiteral, allowPrefix []string
	for _, b := range x.types[rt].all {
		if (b.Host != host && b.Host != Wildcard) || (b.Principal != principal && b.Principal != WildcardPrincipal) ||
			(b.Operation != op && b.Operation != OpAll) {
			continue
		}
		switch {
		case b.Permission == PermissionDeny && b.PatternType == PatternLiteral:
			if b.Name == Wildcard {
				return false
			}
			denyLiteral[b.Name] = true
		case b.Permission == PermissionDeny:
			denyPrefix[b.Name] = true
		case b.PatternType == PatternLiteral:
			if b.Name == Wildcard {
				return true
			}
			allowLiteral = append(allowLiteral, b.Name)
		default:
			allowPrefix = append(allowPrefix, b.Name)
		}
	}
	dominated := func(name string) bool {
		for i := 1; i <= len(name); i++ {
			if denyPrefix[name[:i]] {
				return true
			}
		}
		return false
	}
	for _, n := range allowLiteral {
		if !denyLiteral[n] && !dominated(n) {
			return true
		}
	}
	for _, n := range allowPrefix {
		if !dominated(n) {
			return true
		}
	}
	return false
}

// index is an immutable view of every binding, by resource type.
type index struct {
	rev   int64
	all   []Binding // sorted, deduplicated
	types map[ResourceType]*typeIndex
}

// typeIndex holds one resource type's bindings by pattern: literal ones by
// name (the wildcard under "*"), prefixed ones by prefix, with the
// distinct prefix lengths so a lookup probes only those.
type typeIndex struct {
	all        []Binding
	literal    map[string][]Binding
	prefixed   map[string][]Binding
	prefixLens []int // ascending
}

func newIndex(bindings []Binding, rev int64) *index {
	all := slices.Clone(bindings)
	slices.SortFunc(all, compareBindings)
	all = slices.Compact(all)
	x := &index{rev: rev, all: all, types: map[ResourceType]*typeIndex{}}
	for _, b := range all {
		t := x.types[b.Type]
		if t == nil {
			t = &typeIndex{literal: map[string][]Binding{}, prefixed: map[string][]Binding{}}
			x.types[b.Type] = t
		}
		t.all = append(t.all, b)
		switch b.PatternType {
		case PatternLiteral:
			t.literal[b.Name] = append(t.literal[b.Name], b)
		case PatternPrefixed:
			if _, ok := t.prefixed[b.Name]; !ok {
				t.prefixLens = append(t.prefixLens, len(b.Name))
			}
			t.prefixed[b.Name] = append(t.prefixed[b.Name], b)
		}
	}
	for _, t := range x.types {
		slices.Sort(t.prefixLens)
		t.prefixLens = slices.Compact(t.prefixLens)
	}
	return x
}

// visit feeds d the bindings whose pattern matches name, stopping at the
// first DENY that applies.
func (t *typeIndex) visit(name string, d *decider) {
	if d.consider(t.literal[name]) {
		return
	}
	for _, n := range t.prefixLens {
		if n > len(name) {
			break
		}
		if d.consider(t.prefixed[name[:n]]) {
			return
		}
	}
	if name != Wildcard {
		d.consider(t.literal[Wildcard])
	}
}

func compareBindings(a, b Binding) int {
	if c := int(a.Type) - int(b.Type); c != 0 {
		return c
	}
	if c := strings.Compare(a.Name, b.Name); c != 0 {
		return c
	}
	if c := int(a.PatternType) - int(b.PatternType); c != 0 {
		return c
	}
	if c := strings.Compare(a.Principal, b.Principal); c != 0 {
		return c
	}
	if c := strings.Compare(a.Host, b.Host); c != 0 {
		return c
	}
	if c := int(a.Operation) - int(b.Operation); c != 0 {
		return c
	}
	return int(a.Permission) - int(b.Permission)
}
