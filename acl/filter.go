package acl

import "strings"

// Filter is Kafka's AclBindingFilter, as DescribeAcls and DeleteAcls carry
// it. A nil string matches any value; ResourceAny, PatternAny, OpAny and
// PermissionAny match any code. PatternMatch matches the bindings that
// would apply to the literal resource Name: the literal binding of that
// name, the literal wildcard "*" and every prefixed binding whose name
// starts Name.
type Filter struct {
	ResourceType ResourceType
	Name         *string
	PatternType  PatternType
	Principal    *string
	Host         *string
	Operation    Operation
	Permission   Permission
}

// MatchAll is the filter that matches every binding.
var MatchAll = Filter{ResourceType: ResourceAny, PatternType: PatternAny, Operation: OpAny, Permission: PermissionAny}

// Validate refuses a filter with an Unknown element (a code Kafka does
// not know reads as Unknown), as Kafka does, with kerr.InvalidRequest.
func (f Filter) Validate() error {
	switch {
	case !f.ResourceType.Known():
		return invalid("filter: unknown resource type %s", f.ResourceType)
	case !f.PatternType.Known():
		return invalid("filter: unknown pattern type %s", f.PatternType)
	case !f.Operation.Known():
		return invalid("filter: unknown operation %s", f.Operation)
	case !f.Permission.Known():
		return invalid("filter: unknown permission type %s", f.Permission)
	}
	return nil
}

// Matches reports whether b passes the filter: Kafka's
// ResourcePatternFilter.matches and AccessControlEntryFilter.matches.
func (f Filter) Matches(b Binding) bool {
	return f.matchesPattern(b.Pattern) && f.matchesEntry(b.Entry)
}

func (f Filter) matchesPattern(p Pattern) bool {
	if f.ResourceType != ResourceAny && f.ResourceType != p.Type {
		return false
	}
	if f.PatternType != PatternAny && f.PatternType != PatternMatch && f.PatternType != p.PatternType {
		return false
	}
	if f.Name == nil {
		return true
	}
	name := *f.Name
	if f.PatternType == PatternAny || f.PatternType == p.PatternType {
		return name == p.Name
	}
	switch p.PatternType { // f.PatternType is Match
	case PatternLiteral:
		return name == p.Name || p.Name == Wildcard
	case PatternPrefixed:
		return strings.HasPrefix(name, p.Name)
	default:
		return false
	}
}

func (f Filter) matchesEntry(e Entry) bool {
	if f.Principal != nil && *f.Principal != e.Principal {
		return false
	}
	if f.Host != nil && *f.Host != e.Host {
		return false
	}
	if f.Operation != OpAny && f.Operation != e.Operation {
		return false
	}
	return f.Permission == PermissionAny || f.Permission == e.Permission
}
