package miniotest

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// modulePath is the module whose root holds .bin/minio.
const modulePath = "github.com/sediment-io/sediment"

// errNoBinary says how to get the server.
var errNoBinary = errors.New("MinIO server binary not found: run `make test` (installs MinIO into ./.bin) or set SEDIMENT_MINIO to the path of a minio binary")

// binary returns the path of the MinIO server binary.
func binary() (string, error) {
	if p := os.Getenv("SEDIMENT_MINIO"); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("miniotest: SEDIMENT_MINIO=%s: %w (%w)", p, err, errNoBinary)
		}
		return p, nil
	}
	root, err := moduleRoot()
	if err != nil {
		return "", fmt.Errorf("miniotest: %w (%w)", err, errNoBinary)
	}
	p := filepath.Join(root, ".bin", "minio")
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("miniotest: %s: %w", p, errNoBinary)
	}
	return p, nil
}

// moduleRoot walks up from the working directory (a test runs in its
// package's directory) to the directory whose go.mod declares modulePath.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for range 64 {
		if isModuleRoot(filepath.Join(dir, "go.mod")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	return "", fmt.Errorf("no go.mod of %s above the working directory", modulePath)
}

func isModuleRoot(goMod string) bool {
	f, err := os.Open(goMod)
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); strings.HasPrefix(line, "module ") {
			return strings.TrimSpace(strings.TrimPrefix(line, "module ")) == modulePath
		}
	}
	return false
}
