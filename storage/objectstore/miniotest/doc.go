// Package miniotest runs a real MinIO server for tests: on free loopback
// ports (S3 API and console), with a temporary data directory and fixed
// test credentials, stopped and restarted at will (same port, same data)
// so that tests can take the object store away and give it back.
//
// The server binary is SEDIMENT_MINIO when set, else .bin/minio at the
// module root, which `make test` installs. When it is missing, tests fail
// and say how to get it; they never skip.
//
// A test package shares one server: Shared starts it on first use, and
// the package's TestMain calls Main (or StopShared) to stop it after the
// tests. Start gives a test a server of its own, stopped at the test's
// end, for tests that stop it.
//
// FaultProxy sits between a client and the server and injects 503s,
// connection resets and hangs, for retry tests.
package miniotest
