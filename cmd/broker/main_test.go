package main

import (
	"os"
	"testing"
)

// TestMain lets tests run this test binary as a broker subprocess: with
// SEDIMENT_TEST_BROKER=1 it behaves as `broker` and exits. Crash tests kill
// that process with SIGKILL.
func TestMain(m *testing.M) {
	if os.Getenv("SEDIMENT_TEST_BROKER") == "1" {
		os.Exit(run(os.Args[1:]))
	}
	os.Exit(m.Run())
}
