package acl

import (
	"fmt"
	"strings"
)

// ResourceType is Kafka's ResourceType, by its frozen wire code.
type ResourceType int8

// Kafka's resource types. Unknown and Any appear only in filters; a code
// outside this list reads as Unknown, as Kafka's fromCode does.
const (
	ResourceUnknown         ResourceType = 0
	ResourceAny             ResourceType = 1
	ResourceTopic           ResourceType = 2
	ResourceGroup           ResourceType = 3
	ResourceCluster         ResourceType = 4
	ResourceTransactionalID ResourceType = 5
	ResourceDelegationToken ResourceType = 6
	ResourceUser            ResourceType = 7
)

// PatternType is Kafka's PatternType: how a binding's resource name
// matches. Match and Any are filter-only.
type PatternType int8

// Kafka's pattern types.
const (
	PatternUnknown  PatternType = 0
	PatternAny      PatternType = 1
	PatternMatch    PatternType = 2
	PatternLiteral  PatternType = 3
	PatternPrefixed PatternType = 4
)

// Operation is Kafka's AclOperation.
type Operation int8

// Kafka's operations. Unknown and Any are filter-only.
const (
	OpUnknown         Operation = 0
	OpAny             Operation = 1
	OpAll             Operation = 2
	OpRead            Operation = 3
	OpWrite           Operation = 4
	OpCreate          Operation = 5
	OpDelete          Operation = 6
	OpAlter           Operation = 7
	OpDescribe        Operation = 8
	OpClusterAction   Operation = 9
	OpDescribeConfigs Operation = 10
	OpAlterConfigs    Operation = 11
	OpIdempotentWrite Operation = 12
	OpCreateTokens    Operation = 13
	OpDescribeTokens  Operation = 14
)

// Permission is Kafka's AclPermissionType.
type Permission int8

// Kafka's permission types. Unknown and Any are filter-only.
const (
	PermissionUnknown Permission = 0
	PermissionAny     Permission = 1
	PermissionDeny    Permission = 2
	PermissionAllow   Permission = 3
)

var (
	resourceNames = [...]string{"UNKNOWN", "ANY", "TOPIC", "GROUP", "CLUSTER", "TRANSACTIONAL_ID", "DELEGATION_TOKEN", "USER"}
	patternNames  = [...]string{"UNKNOWN", "ANY", "MATCH", "LITERAL", "PREFIXED"}
	opNames       = [...]string{"UNKNOWN", "ANY", "ALL", "READ", "WRITE", "CREATE", "DELETE", "ALTER", "DESCRIBE",
		"CLUSTER_ACTION", "DESCRIBE_CONFIGS", "ALTER_CONFIGS", "IDEMPOTENT_WRITE", "CREATE_TOKENS", "DESCRIBE_TOKENS"}
	permissionNames = [...]string{"UNKNOWN", "ANY", "DENY", "ALLOW"}
)

func name(names []string, code int8) string {
	if code < 0 || int(code) >= len(names) {
		return fmt.Sprintf("UNKNOWN(%d)", code)
	}
	return names[code]
}

func parse(names []string, s string) (int8, bool) {
	for i, n := range names {
		if strings.EqualFold(n, s) {
			return int8(i), true
		}
	}
	return 0, false
}

func (r ResourceType) String() string { return name(resourceNames[:], int8(r)) }
func (p PatternType) String() string  { return name(patternNames[:], int8(p)) }
func (o Operation) String() string    { return name(opNames[:], int8(o)) }
func (p Permission) String() string   { return name(permissionNames[:], int8(p)) }

// Known reports whether r is one of Kafka's codes other than Unknown: a
// code Kafka's fromCode maps to UNKNOWN is not.
func (r ResourceType) Known() bool { return r > ResourceUnknown && r <= ResourceUser }

// Known reports whether p is a known code other than Unknown.
func (p PatternType) Known() bool { return p > PatternUnknown && p <= PatternPrefixed }

// Known reports whether o is a known code other than Unknown.
func (o Operation) Known() bool { return o > OpUnknown && o <= OpDescribeTokens }

// Known reports whether p is a known code other than Unknown.
func (p Permission) Known() bool { return p > PermissionUnknown && p <= PermissionAllow }

// ParseResourceType reads a name as Kafka's ResourceType.fromString does
// (case-insensitive: "topic", "TRANSACTIONAL_ID").
func ParseResourceType(s string) (ResourceType, error) {
	c, ok := parse(resourceNames[:], s)
	if !ok {
		return 0, fmt.Errorf("acl: unknown resource type %q", s)
	}
	return ResourceType(c), nil
}

// ParsePatternType reads a pattern type name, case-insensitive.
func ParsePatternType(s string) (PatternType, error) {
	c, ok := parse(patternNames[:], s)
	if !ok {
		return 0, fmt.Errorf("acl: unknown pattern type %q", s)
	}
	return PatternType(c), nil
}

// ParseOperation reads an operation name, case-insensitive.
func ParseOperation(s string) (Operation, error) {
	c, ok := parse(opNames[:], s)
	if !ok {
		return 0, fmt.Errorf("acl: unknown operation %q", s)
	}
	return Operation(c), nil
}

// ParsePermission reads a permission type name, case-insensitive.
func ParsePermission(s string) (Permission, error) {
	c, ok := parse(permissionNames[:], s)
	if !ok {
		return 0, fmt.Errorf("acl: unknown permission type %q", s)
	}
	return Permission(c), nil
}
