package main

import (
	"os"
	"testing"

	"github.com/sediment-io/sediment/storage/objectstore/miniotest"
)

// TestMain lets tests run this test binary as a broker subprocess: with
// SEDIMENT_TEST_BROKER=1 it behaves as `broker` and exits. Crash tests kill
// that process with SIGKILL. Otherwise it runs the tests with the AWS
// variables set to the test MinIO's credentials (see miniotest.Main).
func TestMain(m *testing.M) {
	if os.Getenv("SEDIMENT_TEST_BROKER") == "1" {
		os.Exit(run(os.Args[1:]))
	}
	if spec := os.Getenv(memberProcessEnv); spec != "" {
		os.Exit(runGroupMember(spec))
	}
	code := miniotest.Main(m) // m.Run, then stop the MinIO server the tests shared
	for _, stop := range afterTests {
		stop()
	}
	os.Exit(code)
}

// afterTests run once every test has finished: they stop what several
// tests share, such as the reference Apache Kafka broker of the
// differential tests.
var afterTests []func()
