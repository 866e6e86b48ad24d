// Package acl owns Kafka's access control lists as Apache Kafka's
// StandardAuthorizer defines them: the resource, pattern, operation and
// permission types with their wire codes, the validation CreateAcls applies
// to a binding, the filters of DescribeAcls and DeleteAcls, and the
// authorizer that decides whether a principal from a host may perform an
// operation on a resource.
//
// The authorizer answers from an immutable in-memory index that a caller
// rebuilds from the stored bindings (Authorizer.Replace); its lookups cost
// a few map reads per distinct prefix length, never a scan of every ACL.
// Bindings are stored through the metadata package (Store), one key per
// binding, with a revision that tells a broker when to reload.
//
// The package never reads the wire protocol and never authenticates: the
// caller hands it the session's principal ("User:alice") and the client's
// address as Kafka prints it (HostAddress).
package acl
