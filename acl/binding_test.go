package acl_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/sediment-io/sediment/acl"
)

func TestBindingValidate(t *testing.T) {
	good := b(topic, "t", literal, "User:alice", "*", acl.OpRead, allow)
	tests := []struct {
		name   string
		change func(*acl.Binding)
		ok     bool
	}{
		{"good", func(*acl.Binding) {}, true},
		{"prefixed", func(x *acl.Binding) { x.PatternType = prefix }, true},
		{"prefixed star", func(x *acl.Binding) { x.PatternType = prefix; x.Name = "*" }, true},
		{"every resource type", func(x *acl.Binding) { x.Type = acl.ResourceUser }, true},
		{"principal with colons", func(x *acl.Binding) { x.Principal = "User:CN=a:b" }, true},
		{"unknown resource type", func(x *acl.Binding) { x.Type = acl.ResourceUnknown }, false},
		{"any resource type", func(x *acl.Binding) { x.Type = acl.ResourceAny }, false},
		{"resource code 8", func(x *acl.Binding) { x.Type = 8 }, false},
		{"negative resource code", func(x *acl.Binding) { x.Type = -1 }, false},
		{"match pattern", func(x *acl.Binding) { x.PatternType = acl.PatternMatch }, false},
		{"any pattern", func(x *acl.Binding) { x.PatternType = acl.PatternAny }, false},
		{"unknown pattern", func(x *acl.Binding) { x.PatternType = 9 }, false},
		{"any operation", func(x *acl.Binding) { x.Operation = acl.OpAny }, false},
		{"unknown operation", func(x *acl.Binding) { x.Operation = acl.OpUnknown }, false},
		{"operation code 15", func(x *acl.Binding) { x.Operation = 15 }, false},
		{"any permission", func(x *acl.Binding) { x.Permission = acl.PermissionAny }, false},
		{"permission code 4", func(x *acl.Binding) { x.Permission = 4 }, false},
		{"empty name", func(x *acl.Binding) { x.Name = "" }, false},
		{"cluster named", func(x *acl.Binding) { x.Type = acl.ResourceCluster; x.Name = acl.ClusterName }, true},
		{"cluster misnamed", func(x *acl.Binding) { x.Type = acl.ResourceCluster; x.Name = "c" }, false},
		{"principal without colon", func(x *acl.Binding) { x.Principal = "alice" }, false},
		{"empty principal", func(x *acl.Binding) { x.Principal = "" }, false},
	}
	for _, tc := range tests {
		x := good
		tc.change(&x)
		err := x.Validate()
		if tc.ok != (err == nil) {
			t.Errorf("%s: %v", tc.name, err)
		}
		if err != nil && !errors.Is(err, kerr.InvalidRequest) {
			t.Errorf("%s: %v is not INVALID_REQUEST", tc.name, err)
		}
	}
}

func str(s string) *string { return &s }

func TestFilterMatches(t *testing.T) {
	lit := b(topic, "foo", literal, "User:alice", "*", acl.OpRead, allow)
	star := b(topic, "*", literal, "User:bob", "10.0.0.1", acl.OpWrite, deny)
	pre := b(topic, "fo", prefix, "User:alice", "*", acl.OpRead, allow)
	grp := b(group, "foo", literal, "User:alice", "*", acl.OpRead, allow)
	all := []acl.Binding{lit, star, pre, grp}
	f := func(rt acl.ResourceType, name *string, pt acl.PatternType) acl.Filter {
		x := acl.MatchAll
		x.ResourceType, x.Name, x.PatternType = rt, name, pt
		return x
	}
	tests := []struct {
		name   string
		filter acl.Filter
		want   []acl.Binding
	}{
		{"all", acl.MatchAll, all},
		{"topic, any pattern", f(topic, nil, acl.PatternAny), []acl.Binding{lit, star, pre}},
		{"any name foo", f(acl.ResourceAny, str("foo"), acl.PatternAny), []acl.Binding{lit, grp}},
		{"literal foo", f(topic, str("foo"), literal), []acl.Binding{lit}},
		{"literal star is only the wildcard", f(topic, str("*"), literal), []acl.Binding{star}},
		{"prefixed fo", f(topic, str("fo"), prefix), []acl.Binding{pre}},
		{"prefixed foo", f(topic, str("foo"), prefix), nil},
		{"match foo", f(topic, str("foo"), acl.PatternMatch), []acl.Binding{lit, star, pre}},
		{"match foobar", f(topic, str("foobar"), acl.PatternMatch), []acl.Binding{star, pre}},
		{"match f", f(topic, str("f"), acl.PatternMatch), []acl.Binding{star}},
		{"match without name", f(acl.ResourceAny, nil, acl.PatternMatch), all},
		{"principal", func() acl.Filter { x := acl.MatchAll; x.Principal = str("User:bob"); return x }(), []acl.Binding{star}},
		{"host", func() acl.Filter { x := acl.MatchAll; x.Host = str("*"); return x }(), []acl.Binding{lit, pre, grp}},
		{"operation", func() acl.Filter { x := acl.MatchAll; x.Operation = acl.OpWrite; return x }(), []acl.Binding{star}},
		{"permission", func() acl.Filter { x := acl.MatchAll; x.Permission = allow; return x }(), []acl.Binding{lit, pre, grp}},
		{"operation ALL is literal in filters", func() acl.Filter { x := acl.MatchAll; x.Operation = acl.OpAll; return x }(), nil},
	}
	for _, tc := range tests {
		if err := tc.filter.Validate(); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		var got []acl.Binding
		for _, x := range all {
			if tc.filter.Matches(x) {
				got = append(got, x)
			}
		}
		if !equalBindings(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

func equalBindings(a, b []acl.Binding) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestFilterValidate(t *testing.T) {
	for name, change := range map[string]func(*acl.Filter){
		"unknown resource type": func(f *acl.Filter) { f.ResourceType = acl.ResourceUnknown },
		"resource code 99":      func(f *acl.Filter) { f.ResourceType = 99 },
		"unknown pattern type":  func(f *acl.Filter) { f.PatternType = acl.PatternUnknown },
		"unknown operation":     func(f *acl.Filter) { f.Operation = 0 },
		"unknown permission":    func(f *acl.Filter) { f.Permission = 7 },
	} {
		f := acl.MatchAll
		change(&f)
		if err := f.Validate(); !errors.Is(err, kerr.InvalidRequest) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestNamesRoundTrip(t *testing.T) {
	for c := acl.ResourceType(0); c <= acl.ResourceUser; c++ {
		if got, err := acl.ParseResourceType(strings.ToLower(c.String())); err != nil || got != c {
			t.Errorf("%s: %v %v", c, got, err)
		}
	}
	for c := acl.Operation(0); c <= acl.OpDescribeTokens; c++ {
		if got, err := acl.ParseOperation(c.String()); err != nil || got != c {
			t.Errorf("%s: %v %v", c, got, err)
		}
	}
	if _, err := acl.ParsePatternType("regex"); err == nil {
		t.Error("regex pattern type parsed")
	}
	if acl.Operation(42).String() != "UNKNOWN(42)" {
		t.Errorf("op 42: %s", acl.Operation(42))
	}
}

// A binding Validate accepts is one the authorizer can index and decide on
// without panicking, and a bad one always carries INVALID_REQUEST.
func FuzzBindingValidate(f *testing.F) {
	f.Add(int8(2), "t", int8(3), "User:alice", "*", int8(3), int8(3))
	f.Add(int8(4), "kafka-cluster", int8(4), "User:*", "10.0.0.1", int8(2), int8(2))
	f.Add(int8(1), "", int8(2), "alice", "", int8(1), int8(1))
	f.Fuzz(func(t *testing.T, rt int8, name string, pt int8, principal, host string, op, perm int8) {
		x := acl.Binding{Pattern: acl.Pattern{Type: acl.ResourceType(rt), Name: name, PatternType: acl.PatternType(pt)},
			Entry: acl.Entry{Principal: principal, Host: host, Operation: acl.Operation(op), Permission: acl.Permission(perm)}}
		_ = x.String()
		if err := x.Validate(); err != nil {
			if !errors.Is(err, kerr.InvalidRequest) {
				t.Fatalf("%s: %v", x, err)
			}
			return
		}
		a, err := acl.NewAuthorizer(acl.Config{})
		if err != nil {
			t.Fatal(err)
		}
		a.Replace([]acl.Binding{x}, 1)
		got := a.Authorize(principal, host, x.Operation, x.Type, name)
		if want := x.Permission == acl.PermissionAllow; got != want {
			t.Fatalf("%s: its own request allowed %v, want %v", x, got, want)
		}
		self := acl.Filter{ResourceType: x.Type, Name: &name, PatternType: x.PatternType, Principal: &principal,
			Host: &host, Operation: x.Operation, Permission: x.Permission}
		if !self.Matches(x) || len(a.ACLs(self)) != 1 {
			t.Fatalf("%s: its exact filter does not match it", x)
		}
	})
}
