package catalog_test

import (
	"os"
	"testing"

	"github.com/sediment-io/sediment/storage/objectstore/miniotest"
)

// TestMain points the AWS variables at the test MinIO's credentials and
// stops the shared MinIO after the tests.
func TestMain(m *testing.M) { os.Exit(miniotest.Main(m)) }
