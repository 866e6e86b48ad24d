// Package admin is the operator command line of Sediment: `broker topics`,
// `broker groups`, `broker offsets`, `broker transactions` and `broker
// producers`. It speaks only the Kafka protocol, through franz-go's kadm,
// so every command works against any Kafka-compatible cluster, not only a
// Sediment broker.
//
// Run is the single entry point; cmd/broker hands it the arguments after
// the command name. Exit codes: 0 success, 1 a failed operation (the
// cluster refused or could not be reached), 2 bad usage (one line naming
// the flag). Read commands print an aligned table, JSON or CSV (--output);
// the JSON and CSV of `offsets get` are what `offsets commit --input-json`
// reads, so an export can be fed back as an import.
//
// The package never keeps state between runs and never talks to a broker
// other than through the client it builds from --bootstrap-server.
package admin
