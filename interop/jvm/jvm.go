// Package jvm runs the Java side of the interop tests and of the bench
// suite's kafka target: the classes of the pinned Maven project in
// interop/java (the Java client, Kafka's command-line tools, Streams,
// Connect) and a single-node Apache Kafka broker in KRaft mode. Nothing in
// the broker binary's serving path imports it: the broker stays one Go
// binary with no JVM.
package jvm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// ClasspathEnv overrides where the classpath comes from: a full Java
// classpath, used as is.
const ClasspathEnv = "SEDIMENT_JAVA_CLASSPATH"

// buildHint says how to get what Classpath looks for.
const buildHint = "run `make java-interop` (it needs a JDK 17 and Maven: `apt-get install -y openjdk-17-jdk-headless maven`)"

// Classpath returns the classpath of the pinned Maven project: its own
// classes followed by every dependency, as `make java-interop` leaves them
// in interop/java/target. It looks for the project from the working
// directory upward, so tests in any package of the module find it.
func Classpath() (string, error) {
	if cp := os.Getenv(ClasspathEnv); cp != "" {
		return cp, nil
	}
	if _, err := exec.LookPath("java"); err != nil {
		return "", fmt.Errorf("jvm: no java on PATH: %s", buildHint)
	}
	root, err := projectDir()
	if err != nil {
		return "", err
	}
	target := filepath.Join(root, "target")
	deps, err := os.ReadFile(filepath.Join(target, "classpath.txt"))
	if err != nil {
		return "", fmt.Errorf("jvm: the Java project is not built (%w): %s", err, buildHint)
	}
	classes := filepath.Join(target, "classes")
	if _, err := os.Stat(classes); err != nil {
		return "", fmt.Errorf("jvm: the Java project is not built (%w): %s", err, buildHint)
	}
	return classes + string(os.PathListSeparator) + strings.TrimSpace(string(deps)), nil
}

// projectDir finds interop/java from the working directory upward.
func projectDir() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("jvm: %w", err)
	}
	for {
		p := filepath.Join(dir, "interop", "java")
		if _, err := os.Stat(filepath.Join(p, "pom.xml")); err == nil {
			return p, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("jvm: interop/java/pom.xml not found above the working directory; run from inside the repository or set " + ClasspathEnv)
		}
		dir = parent
	}
}

// Command is `java -cp CP [jvmArgs] class args...`, the way Kafka's shell
// scripts run a tool's main class. The JVM gets a small heap unless
// jvmArgs say otherwise: these machines run several JVMs beside the broker.
func Command(ctx context.Context, cp string, jvmArgs []string, class string, args ...string) *exec.Cmd {
	argv := []string{"-cp", cp}
	if !hasHeapFlag(jvmArgs) {
		argv = append(argv, "-Xmx256m")
	}
	argv = append(argv, "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1")
	argv = append(argv, jvmArgs...)
	argv = append(argv, class)
	argv = append(argv, args...)
	cmd := exec.CommandContext(ctx, "java", argv...)
	return cmd
}

func hasHeapFlag(args []string) bool {
	for _, a := range args {
		if strings.HasPrefix(a, "-Xmx") {
			return true
		}
	}
	return false
}

// Result is what a finished Java program printed.
type Result struct {
	Stdout, Stderr string
}

// Run runs class's main with args and returns its output; a non-zero exit
// is an error that carries stderr.
func Run(ctx context.Context, cp string, class string, args ...string) (Result, error) {
	cmd := Command(ctx, cp, nil, class, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	res := Result{Stdout: stdout.String(), Stderr: stderr.String()}
	if err != nil {
		return res, fmt.Errorf("jvm: %s %s: %w\nstderr:\n%s", class, strings.Join(args, " "), err, tail(res.Stderr, 4000))
	}
	return res, nil
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "..." + s[len(s)-n:]
}
