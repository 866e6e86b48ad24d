// Package localfs is an objectstore.Store kept in a local folder that
// behaves like a bucket: the embedded default for a single broker.
//
// # Layout
//
// Each object is one plain file holding exactly its bytes. A key's last
// segment names the file; every earlier segment names a directory whose name
// ends in '%', so that "a/b" (a file) and "a/b/c" (a file in a directory) can
// both exist, as they can in S3. A '%' inside a segment is written "%25".
//
//	key            path under the root
//	a              a
//	a/b            a%/b
//	a/b/c          a%/b%/c
//	50%/x          50%25%/x
//	(temp files)   .%tmp/put-*     never a valid name, so never listed
//
// List ignores every name that is not the canonical encoding of a segment
// (temp files, stray files, lost+found), and walks in true lexical key order
// rather than the directory order. Keys must pass objectstore.ValidateKey,
// which also keeps them from escaping the root. The folder must live on a
// case-sensitive filesystem.
//
// # Durability and atomicity
//
// Put writes a temp file in the staging directory, fsyncs it, renames it
// into place (or links it, for IfAbsent) and fsyncs the parent directory, so
// a reader never sees a partial object and a successful Put survives a
// crash. Delete fsyncs the parent directory and then removes the directories
// it left empty, best-effort. Open removes temp files older than an hour,
// litter of puts that crashed.
//
// # ETags
//
// The ETag is objectstore.ContentETag of the bytes (xxHash-64). Put records
// it in the extended attribute "user.sediment.etag" of the file, which the
// rename carries along atomically; where extended attributes are missing or
// unsupported the ETag is recomputed from the content (a full read) and
// recorded when possible. Files must not be modified in place behind the
// store's back.
//
// # Concurrency
//
// A Store is safe for concurrent use, and its conditional puts are
// linearizable among its callers: one mutex is held around every change of a
// name under the root and the check a conditional put makes first. Other
// processes, or a second Store opened on the same folder, may read it, but
// must not write to it concurrently: IfAbsent stays correct across processes
// (link(2) never replaces a file), IfMatch does not.
package localfs
