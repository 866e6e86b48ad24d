// Package auth holds the broker's server side of authentication: the SASL
// mechanisms a connection drives (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512),
// the TLS configuration of its listeners with certificate reload and
// Kafka's ssl.principal.mapping.rules, and the growing delay that slows
// down password guessing. It knows nothing of Kafka framing: the protocol
// package hands it the bytes of SaslAuthenticate requests.
//
// A SASL exchange is one Session per connection attempt:
//
//	sess, err := srv.Start("SCRAM-SHA-512")
//	for {
//		reply, done, principal, err := sess.Step(ctx, clientBytes)
//		// send reply; stop at done or err
//	}
//
// A Session serves one exchange and refuses every step after it finished
// or failed.
//
// # Users file
//
// PLAIN users may come from a file (LoadUsersFile, or WatchUsersFile to
// pick up edits without a restart), one user a line:
//
//	# comment
//	alice:secret password
//	bob:p:w
//
// The name is everything before the first ':', the password everything
// after it (it may hold ':' and spaces; trailing spaces are kept). Blank
// lines and lines starting with '#' are skipped; a line without ':', an
// empty name or a name given twice is an error naming the line.
package auth
