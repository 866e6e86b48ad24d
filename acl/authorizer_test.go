package acl_test

import (
	"fmt"
	"net/netip"
	"testing"

	"github.com/sediment-io/sediment/acl"
)

func b(rt acl.ResourceType, name string, pt acl.PatternType, principal, host string, op acl.Operation, perm acl.Permission) acl.Binding {
	return acl.Binding{Pattern: acl.Pattern{Type: rt, Name: name, PatternType: pt},
		Entry: acl.Entry{Principal: principal, Host: host, Operation: op, Permission: perm}}
}

const (
	topic   = acl.ResourceTopic
	group   = acl.ResourceGroup
	literal = acl.PatternLiteral
	prefix  = acl.PatternPrefixed
	allow   = acl.PermissionAllow
	deny    = acl.PermissionDeny
)

// check is one authorization and the answer Kafka gives.
type check struct {
	user, host string
	op         acl.Operation
	rt         acl.ResourceType
	name       string
	want       bool
}

func newAuthorizer(t *testing.T, cfg acl.Config, bindings ...acl.Binding) *acl.Authorizer {
	t.Helper()
	a, err := acl.NewAuthorizer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range bindings {
		if err := x.Validate(); err != nil {
			t.Fatalf("%s: %v", x, err)
		}
	}
	a.Replace(bindings, 1)
	return a
}

// The cases of Kafka's StandardAuthorizerTest, with the ACLs and answers
// it asserts.
func TestAuthorizerKafkaCases(t *testing.T) {
	superman := acl.Config{SuperUsers: []string{"User:superman"}}
	fooACL := func(op acl.Operation, p acl.Permission) acl.Binding {
		return b(topic, "foo_", prefix, "User:bob", "*", op, p)
	}
	barACL := func(op acl.Operation, p acl.Permission) acl.Binding {
		return b(group, "bar", literal, "User:*", "*", op, p)
	}
	manyACLs := []acl.Binding{
		b(topic, "green2", literal, "User:*", "*", acl.OpRead, allow),
		b(topic, "green", prefix, "User:bob", "*", acl.OpRead, allow),
		b(topic, "betamax4", literal, "User:bob", "*", acl.OpRead, allow),
		b(topic, "betamax", literal, "User:bob", "*", acl.OpRead, allow),
		b(topic, "beta", prefix, "User:*", "*", acl.OpRead, allow),
		b(topic, "alpha", prefix, "User:*", "*", acl.OpRead, allow),
		b(topic, "alp", prefix, "User:bob", "*", acl.OpRead, deny),
		b(group, "*", literal, "User:bob", "*", acl.OpWrite, allow),
		b(group, "wheel", literal, "User:*", "*", acl.OpWrite, deny),
	}
	tests := []struct {
		name     string
		cfg      acl.Config
		bindings []acl.Binding
		checks   []check
	}{
		{"AllowEveryoneIfNoAclFoundEnabled",
			acl.Config{SuperUsers: []string{"User:alice", "User:chris"}, AllowEveryoneIfNoACLFound: true},
			[]acl.Binding{b(topic, "topic1", literal, "User:Alice", "*", acl.OpRead, allow)},
			[]check{{"Bob", "", acl.OpRead, topic, "topic1", false}, {"Bob", "", acl.OpRead, topic, "topic2", true}}},
		{"AllowEveryoneIfNoAclFoundDisabled",
			acl.Config{SuperUsers: []string{"User:alice", "User:chris"}},
			[]acl.Binding{b(topic, "topic1", literal, "User:Alice", "*", acl.OpRead, allow)},
			[]check{{"Bob", "", acl.OpRead, topic, "topic1", false}, {"Bob", "", acl.OpRead, topic, "topic2", false}}},
		{"ImpliedDescribe", superman,
			[]acl.Binding{fooACL(acl.OpRead, allow)},
			[]check{{"bob", "", acl.OpDescribe, topic, "foo_bar", true}, {"bob", "", acl.OpWrite, topic, "foo_bar", false}}},
		{"CreateDoesNotImplyDescribe", superman,
			[]acl.Binding{fooACL(acl.OpCreate, allow)},
			[]check{{"bob", "", acl.OpDescribe, topic, "foo_bar", false}, {"bob", "", acl.OpCreate, topic, "foo_bar", true}}},
		{"DenyImpliesNothing", superman,
			[]acl.Binding{fooACL(acl.OpRead, deny), fooACL(acl.OpWrite, deny), fooACL(acl.OpDelete, deny),
				fooACL(acl.OpAlter, deny), fooACL(acl.OpAlterConfigs, deny), fooACL(acl.OpDescribe, allow),
				fooACL(acl.OpDescribeConfigs, allow)},
			[]check{{"bob", "", acl.OpDescribe, topic, "foo_bar", true}, {"bob", "", acl.OpDescribeConfigs, topic, "foo_bar", true},
				{"bob", "", acl.OpRead, topic, "foo_bar", false}, {"bob", "", acl.OpAlterConfigs, topic, "foo_bar", false}}},
		{"ImpliedDescribeConfigs", superman,
			[]acl.Binding{fooACL(acl.OpAlterConfigs, allow)},
			[]check{{"bob", "", acl.OpDescribeConfigs, topic, "foo_bar", true}, {"bob", "", acl.OpDescribe, topic, "foo_bar", false}}},
		{"PrincipalMatching", superman,
			[]acl.Binding{fooACL(acl.OpRead, allow), barACL(acl.OpRead, deny)},
			[]check{{"bob", "", acl.OpRead, topic, "foo_bar", true}, {"alice", "", acl.OpRead, topic, "foo_bar", false},
				{"alice", "", acl.OpRead, group, "bar", false}}},
		{"SimpleAuthorizations", superman,
			[]acl.Binding{fooACL(acl.OpRead, allow), fooACL(acl.OpWrite, allow), barACL(acl.OpDescribeConfigs, allow),
				barACL(acl.OpAlterConfigs, allow)},
			[]check{{"bob", "", acl.OpRead, topic, "foo_", true}, {"fred", "", acl.OpAlterConfigs, group, "bar", true}}},
		{"DenyPrecedenceWithOperationAll", superman,
			[]acl.Binding{
				b(topic, "foo", literal, "User:alice", "*", acl.OpAll, deny),
				b(topic, "foo", prefix, "User:alice", "*", acl.OpRead, allow),
				b(topic, "foo", literal, "User:*", "*", acl.OpAll, deny),
				b(topic, "foo", prefix, "User:*", "*", acl.OpDescribe, allow)},
			[]check{
				{"alice", "", acl.OpWrite, topic, "foo", false}, {"alice", "", acl.OpRead, topic, "foo", false},
				{"alice", "", acl.OpDescribe, topic, "foo", false}, {"alice", "", acl.OpRead, topic, "foobar", true},
				{"bob", "", acl.OpDescribe, topic, "foo", false}, {"bob", "", acl.OpRead, topic, "foo", false},
				{"bob", "", acl.OpWrite, topic, "foo", false}, {"bob", "", acl.OpDescribe, topic, "foobaz", true},
				{"bob", "", acl.OpRead, topic, "foobaz", false}}},
		{"TopicAclWithOperationAll", superman,
			[]acl.Binding{
				b(topic, "foo", literal, "User:*", "*", acl.OpAll, allow),
				b(topic, "bar", prefix, "User:alice", "*", acl.OpAll, allow),
				b(topic, "baz", literal, "User:bob", "*", acl.OpAll, allow)},
			[]check{
				{"alice", "", acl.OpWrite, topic, "foo", true}, {"alice", "", acl.OpDescribeConfigs, topic, "bar", true},
				{"alice", "", acl.OpDescribe, topic, "baz", false},
				{"bob", "", acl.OpWrite, topic, "foo", true}, {"bob", "", acl.OpRead, topic, "bar", false},
				{"bob", "", acl.OpDescribe, topic, "baz", true},
				{"malory", "", acl.OpDescribe, topic, "foo", true}, {"malory", "", acl.OpWrite, topic, "bar", false},
				{"malory", "", acl.OpRead, topic, "baz", false}}},
		{"HostAddressAclValidation", superman,
			[]acl.Binding{
				b(topic, "foo", literal, "User:alice", "192.168.1.1", acl.OpRead, deny),
				b(topic, "foo", literal, "User:alice", "*", acl.OpRead, allow),
				b(topic, "bar", literal, "User:bob", "192.168.1.2", acl.OpRead, allow),
				b(topic, "bar", literal, "User:*", "127.0.0.1", acl.OpDescribe, allow)},
			hostChecks()},
		{"AuthorizationWithManyAcls", superman, manyACLs,
			[]check{
				{"bob", "", acl.OpRead, topic, "green1", true}, {"bob", "", acl.OpWrite, group, "wheel", false},
				{"bob", "", acl.OpRead, topic, "alpha", false}, {"bob", "", acl.OpWrite, group, "arbitrary", true},
				{"bob", "", acl.OpRead, topic, "ala", false}}},
		{"PrefixAcls", superman,
			[]acl.Binding{
				b(topic, "fooa", prefix, "User:alice", "*", acl.OpAll, allow),
				b(topic, "foobar", literal, "User:bob", "*", acl.OpAll, allow),
				b(topic, "f", prefix, "User:bob", "*", acl.OpAll, allow)},
			[]check{
				{"bob", "", acl.OpWrite, topic, "foobarr", true}, {"bob", "", acl.OpRead, topic, "goobar", false},
				{"bob", "", acl.OpRead, topic, "fooa", true},
				{"alice", "", acl.OpDescribe, topic, "fooa", true}, {"alice", "", acl.OpWrite, topic, "bar", false},
				{"alice", "", acl.OpRead, topic, "baz", false}}},
		{"SuperUserBeatsDeny", superman,
			[]acl.Binding{b(topic, "*", literal, "User:*", "*", acl.OpAll, deny)},
			[]check{{"superman", "", acl.OpWrite, topic, "x", true}, {"bob", "", acl.OpWrite, topic, "x", false}}},
		{"LiteralWildcardAndPrefixedStar", superman,
			[]acl.Binding{
				b(topic, "*", literal, "User:bob", "*", acl.OpRead, allow),
				b(topic, "*", prefix, "User:carol", "*", acl.OpRead, allow)},
			[]check{{"bob", "", acl.OpRead, topic, "anything", true}, {"bob", "", acl.OpRead, group, "anything", false},
				{"carol", "", acl.OpRead, topic, "anything", false}, {"carol", "", acl.OpRead, topic, "*star", true}}},
		{"NoAclDefaultCountsOtherPrincipalsAndWildcards",
			acl.Config{AllowEveryoneIfNoACLFound: true},
			[]acl.Binding{
				b(topic, "pay", prefix, "User:alice", "*", acl.OpRead, allow),
				b(group, "*", literal, "User:alice", "*", acl.OpRead, allow)},
			[]check{{"bob", "", acl.OpRead, topic, "payments", false}, {"bob", "", acl.OpRead, topic, "pa", true},
				{"bob", "", acl.OpRead, group, "g", false}, {"bob", "", acl.OpRead, acl.ResourceCluster, acl.ClusterName, true}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := newAuthorizer(t, tc.cfg, tc.bindings...)
			for _, c := range tc.checks {
				host := c.host
				if host == "" {
					host = "127.0.0.1"
				}
				if got := a.Authorize("User:"+c.user, host, c.op, c.rt, c.name); got != c.want {
					t.Errorf("User:%s from %s %s %s %q: allowed %v, want %v (%+v)", c.user, host, c.op, c.rt, c.name,
						got, c.want, a.Decide("User:"+c.user, host, c.op, c.rt, c.name))
				}
			}
		})
	}
}

// Kafka's testHostAddressAclValidation, with 127.0.0.1 as the local host.
func hostChecks() []check {
	var out []check
	for _, row := range []struct {
		user, host string
		want       [3]bool // READ foo, READ bar, DESCRIBE bar
	}{
		{"alice", "127.0.0.1", [3]bool{true, false, true}},
		{"alice", "192.168.1.1", [3]bool{false, false, false}},
		{"alice", "192.168.1.2", [3]bool{true, false, false}},
		{"bob", "127.0.0.1", [3]bool{false, false, true}},
		{"bob", "192.168.1.1", [3]bool{false, false, false}},
		{"bob", "192.168.1.2", [3]bool{false, true, true}},
	} {
		out = append(out,
			check{row.user, row.host, acl.OpRead, topic, "foo", row.want[0]},
			check{row.user, row.host, acl.OpRead, topic, "bar", row.want[1]},
			check{row.user, row.host, acl.OpDescribe, topic, "bar", row.want[2]})
	}
	return out
}

// Before its first Replace only super users are allowed, as Kafka's
// authorizer before its initial load.
func TestAuthorizerNotReady(t *testing.T) {
	a, err := acl.NewAuthorizer(acl.Config{SuperUsers: []string{"User:superman"}, AllowEveryoneIfNoACLFound: true})
	if err != nil {
		t.Fatal(err)
	}
	if d := a.Decide("User:bob", "127.0.0.1", acl.OpRead, topic, "t"); d.Allowed || d.Rule != acl.RuleNotReady {
		t.Fatalf("before load: %+v", d)
	}
	if !a.Authorize("User:superman", "127.0.0.1", acl.OpRead, topic, "t") {
		t.Fatal("super user refused before load")
	}
	a.Replace(nil, 0)
	if !a.Authorize("User:bob", "127.0.0.1", acl.OpRead, topic, "t") {
		t.Fatal("no ACLs and allow.everyone.if.no.acl.found: refused")
	}
}

// The deciding binding is reported, as Kafka's audit log names it.
func TestDecisionNamesRule(t *testing.T) {
	green := b(topic, "green", prefix, "User:bob", "*", acl.OpRead, allow)
	alp := b(topic, "alp", prefix, "User:bob", "*", acl.OpRead, deny)
	a := newAuthorizer(t, acl.Config{}, green, alp, b(topic, "alpha", prefix, "User:*", "*", acl.OpRead, allow))
	if d := a.Decide("User:bob", "127.0.0.1", acl.OpRead, topic, "alpha"); d.Allowed || d.ACL != alp {
		t.Fatalf("alpha: %+v", d)
	}
	if d := a.Decide("User:bob", "127.0.0.1", acl.OpRead, topic, "green1"); !d.Allowed || d.ACL != green {
		t.Fatalf("green1: %+v", d)
	}
	if d := a.Decide("User:bob", "127.0.0.1", acl.OpRead, topic, "zebra"); d.Allowed || d.Rule != acl.RuleNoACLs {
		t.Fatalf("zebra: %+v", d)
	}
}

func TestParseSuperUsers(t *testing.T) {
	for in, want := range map[string]string{"": "[]", " ": "[]", "User:bob;User:alice ": "[User:bob User:alice]",
		";  User:bob  ;  User:alice ": "[User:bob User:alice]"} {
		got, err := acl.ParseSuperUsers(in)
		if err != nil || fmt.Sprint(got) != want {
			t.Errorf("%q: %v %v, want %s", in, got, err, want)
		}
	}
	if _, err := acl.ParseSuperUsers("bob;:alice"); err == nil {
		t.Error("bob;:alice accepted")
	}
}

// Kafka's authorizeByResourceType cases (AuthorizerTest.testAuthorizeByResourceType*).
func TestAuthorizeByResourceType(t *testing.T) {
	w := acl.OpWrite
	tests := []struct {
		name     string
		bindings []acl.Binding
		want     bool
	}{
		{"none", nil, false},
		{"literal allow", []acl.Binding{b(topic, "t", literal, "User:alice", "*", w, allow)}, true},
		{"other principal", []acl.Binding{b(topic, "t", literal, "User:bob", "*", w, allow)}, false},
		{"other op", []acl.Binding{b(topic, "t", literal, "User:alice", "*", acl.OpRead, allow)}, false},
		{"op ALL", []acl.Binding{b(topic, "t", literal, "User:alice", "*", acl.OpAll, allow)}, true},
		{"literal allow, same literal deny", []acl.Binding{b(topic, "t", literal, "User:alice", "*", w, allow),
			b(topic, "t", literal, "User:alice", "*", w, deny)}, false},
		{"literal allow, prefix deny dominates", []acl.Binding{b(topic, "abc", literal, "User:alice", "*", w, allow),
			b(topic, "a", prefix, "User:alice", "*", w, deny)}, false},
		{"prefix allow, longer prefix deny", []acl.Binding{b(topic, "a", prefix, "User:alice", "*", w, allow),
			b(topic, "abc", prefix, "User:alice", "*", w, deny)}, true},
		{"wildcard deny", []acl.Binding{b(topic, "t", literal, "User:alice", "*", w, allow),
			b(topic, "*", literal, "User:*", "*", w, deny)}, false},
		{"wildcard allow", []acl.Binding{b(topic, "*", literal, "User:*", "*", w, allow)}, true},
		{"other host", []acl.Binding{b(topic, "t", literal, "User:alice", "10.0.0.1", w, allow)}, false},
	}
	for _, tc := range tests {
		a := newAuthorizer(t, acl.Config{SuperUsers: []string{"User:superman"}}, tc.bindings...)
		if got := a.AuthorizeByResourceType("User:alice", "127.0.0.1", w, topic); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
		if !a.AuthorizeByResourceType("User:superman", "127.0.0.1", w, topic) {
			t.Errorf("%s: super user refused", tc.name)
		}
	}
}

func TestHostAddress(t *testing.T) {
	for in, want := range map[string]string{"127.0.0.1": "127.0.0.1", "::1": "0:0:0:0:0:0:0:1",
		"::ffff:10.1.2.3": "10.1.2.3", "fe80::1%eth0": "fe80:0:0:0:0:0:0:1%eth0",
		"2001:db8::ab:0": "2001:db8:0:0:0:0:ab:0"} {
		if got := acl.HostAddress(netip.MustParseAddr(in)); got != want {
			t.Errorf("%s: %s, want %s", in, got, want)
		}
	}
}

// Authorize among many bindings: the cost follows the prefix lengths in
// use, not the number of bindings.
func BenchmarkAuthorize(b *testing.B) {
	var bindings []acl.Binding
	for i := range 100000 {
		name := fmt.Sprintf("team%03d.topic%03d", i%1000, i/1000)
		bindings = append(bindings, acl.Binding{
			Pattern: acl.Pattern{Type: topic, Name: name, PatternType: literal},
			Entry:   acl.Entry{Principal: fmt.Sprintf("User:u%d", i%50), Host: "*", Operation: acl.OpRead, Permission: allow}})
		if i%100 == 0 {
			bindings = append(bindings, acl.Binding{
				Pattern: acl.Pattern{Type: topic, Name: name[:8], PatternType: prefix},
				Entry:   acl.Entry{Principal: "User:u1", Host: "*", Operation: acl.OpWrite, Permission: allow}})
		}
	}
	a, err := acl.NewAuthorizer(acl.Config{})
	if err != nil {
		b.Fatal(err)
	}
	a.Replace(bindings, 1)
	b.ResetTimer()
	for i := range b.N {
		a.Authorize("User:u1", "127.0.0.1", acl.OpWrite, topic, fmt.Sprintf("team%03d.topic007", i%1000))
	}
}
