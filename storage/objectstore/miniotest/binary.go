package miniotest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/sediment-io/sediment/internal/modroot"
)

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
	root, err := modroot.Dir()
	if err != nil {
		return "", fmt.Errorf("miniotest: %w (%w)", err, errNoBinary)
	}
	p := filepath.Join(root, ".bin", "minio")
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("miniotest: %s: %w", p, errNoBinary)
	}
	return p, nil
}
