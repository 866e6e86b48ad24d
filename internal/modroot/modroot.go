// Package modroot finds the root of the Sediment checkout, where `make`
// installs the servers that tests and benchmarks launch (.bin/minio,
// .bin/etcd).
package modroot

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Path is the module whose go.mod marks the root.
const Path = "github.com/sediment-io/sediment"

// maxDepth bounds the walk up from the working directory.
const maxDepth = 64

// Dir walks up from the working directory (a test runs in its package's
// directory, `broker bench` in the checkout) to the directory whose go.mod
// declares Path.
func Dir() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("modroot: %w", err)
	}
	return from(dir)
}

func from(dir string) (string, error) {
	for range maxDepth {
		if declares(filepath.Join(dir, "go.mod")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	return "", errors.New("modroot: no go.mod of " + Path + " above the working directory")
}

// declares reports whether the go.mod file names Path as its module.
func declares(goMod string) bool {
	f, err := os.Open(goMod)
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); strings.HasPrefix(line, "module ") {
			return strings.TrimSpace(strings.TrimPrefix(line, "module ")) == Path
		}
	}
	return false
}
