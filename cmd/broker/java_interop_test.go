//go:build interop

package main

// Shared helpers of the Java interop tests: the classpath of the pinned
// Maven project (interop/java) and running one of its main classes, or a
// Kafka tool's, the way Kafka's shell scripts do.

import (
	"context"
	"testing"
	"time"

	"github.com/sediment-io/sediment/interop/jvm"
)

// javaClasspath returns the pinned project's classpath or fails the test
// with what to run or install.
func javaClasspath(t *testing.T) string {
	t.Helper()
	cp, err := jvm.Classpath()
	if err != nil {
		t.Fatal(err)
	}
	return cp
}

// runJava runs class's main with args, bounded by two minutes, and returns
// what it printed; a non-zero exit fails the test with its stderr.
func runJava(t *testing.T, class string, args ...string) jvm.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := jvm.Run(ctx, javaClasspath(t), class, args...)
	if err != nil {
		t.Fatal(err)
	}
	return res
}
