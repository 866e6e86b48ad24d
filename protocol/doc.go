// Package protocol is the Kafka wire protocol front end: a TCP server that
// frames requests, decodes them with franz-go's kmsg, dispatches each to the
// handler of its API, and writes responses back in request order.
//
// One file per API, named by API key (00_produce.go, 01_fetch.go, …). Each
// file registers the version range it serves in its init; ApiVersions is
// computed from those registrations and never written by hand.
//
// Two error channels, as in kfake: per-partition (or per-resource) failures
// are Kafka error codes inside the response; a Go error returned by a
// handler means the connection cannot continue and is closed. A malformed
// frame, an unknown API or an oversize request closes only its own
// connection, with one log line; every other connection keeps being served.
//
// The package turns requests into calls on storage/partition, metadata and
// the group (groupcoord) and transaction (txncoord) coordinators; it holds
// no log state of its own.
package protocol
