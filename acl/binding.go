package acl

import (
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
)

// Wildcards and fixed names, as Kafka spells them.
const (
	// Wildcard is the resource name of a literal binding that matches every
	// name of its resource type, and the host that matches every host.
	Wildcard = "*"
	// WildcardPrincipal is the principal that matches every principal.
	WildcardPrincipal = "User:*"
	// ClusterName is the one name a CLUSTER resource has.
	ClusterName = "kafka-cluster"
	// Anonymous is the principal of a connection that did not authenticate.
	Anonymous = "User:ANONYMOUS"
)

// Pattern is Kafka's ResourcePattern: a resource type, a name and how the
// name matches (Literal, where "*" is every name, or Prefixed).
type Pattern struct {
	Type        ResourceType
	Name        string
	PatternType PatternType
}

// Entry is Kafka's AccessControlEntry: who ("User:alice", "User:*"), from
// where (an address as HostAddress prints it, or "*"), what and whether it
// is allowed.
type Entry struct {
	Principal  string
	Host       string
	Operation  Operation
	Permission Permission
}

// Binding is Kafka's AclBinding: an entry bound to a resource pattern.
type Binding struct {
	Pattern
	Entry
}

// String prints a binding as one log line's worth, in Kafka's words.
func (b Binding) String() string {
	return fmt.Sprintf("(pattern=%s:%s:%q, principal=%q, host=%q, operation=%s, permission=%s)",
		b.Type, b.PatternType, b.Name, b.Principal, b.Host, b.Operation, b.Permission)
}

// Validate checks a binding as CreateAcls does before storing it: known
// resource type, a Literal or Prefixed pattern, a known operation other
// than Any, Allow or Deny, a non-empty name, "kafka-cluster" as the only
// CLUSTER name, and a principal of the form type:name. Every failure wraps
// kerr.InvalidRequest, the code Kafka answers.
//
// Kafka's controller stores a principal without a colon and fails on it
// only when authorizing; refusing it here keeps such a binding out.
func (b Binding) Validate() error {
	switch {
	case !b.Type.Known() || b.Type == ResourceAny:
		return invalid("invalid resource type %s", b.Type)
	case b.PatternType != PatternLiteral && b.PatternType != PatternPrefixed:
		return invalid("invalid pattern type %s", b.PatternType)
	case !b.Operation.Known() || b.Operation == OpAny:
		return invalid("invalid operation %s", b.Operation)
	case b.Permission != PermissionAllow && b.Permission != PermissionDeny:
		return invalid("invalid permission type %s", b.Permission)
	case b.Name == "":
		return invalid("invalid empty resource name")
	case b.Type == ResourceCluster && b.Name != ClusterName:
		return invalid("the only valid name for the CLUSTER resource is %s", ClusterName)
	}
	if _, _, err := ParsePrincipal(b.Principal); err != nil {
		return err
	}
	return nil
}

// ParsePrincipal splits "type:name" at its first colon, as Kafka's
// SecurityUtils.parseKafkaPrincipal does; an empty string or one without a
// colon is refused with kerr.InvalidRequest.
func ParsePrincipal(s string) (typ, name string, err error) {
	typ, name, ok := strings.Cut(s, ":")
	if !ok {
		return "", "", invalid("expected a principal in format principalType:principalName but got %q", s)
	}
	return typ, name, nil
}

func invalid(format string, args ...any) error {
	return fmt.Errorf("acl: "+format+": %w", append(args, kerr.InvalidRequest)...)
}
