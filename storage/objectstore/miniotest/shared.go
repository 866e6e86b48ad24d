package miniotest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	miniogo "github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

var shared struct {
	once sync.Once
	srv  *Server
	dir  string
	err  error
}

// Shared returns the package's server, starting it on first use. It fails
// the test when the server cannot start (or its binary is missing).
func Shared(t testing.TB) *Server {
	t.Helper()
	shared.once.Do(func() {
		shared.dir, shared.err = os.MkdirTemp("", "miniotest-")
		if shared.err == nil {
			shared.srv, shared.err = newServer(shared.dir)
		}
	})
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	return shared.srv
}

// StopShared stops the package's server, if one was started, and removes
// its data. TestMain calls it after the tests.
func StopShared() {
	if shared.srv != nil {
		if err := shared.srv.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
	}
	if shared.dir != "" {
		os.RemoveAll(shared.dir)
	}
}

// Main runs the package's tests and then stops the shared server: use it
// as `func TestMain(m *testing.M) { os.Exit(miniotest.Main(m)) }`. Before
// the tests it points the standard AWS variables at the test credentials
// and away from the user's ~/.aws files and profile, so that the SDKs'
// default chains find the test server's keys and nothing else.
func Main(m *testing.M) int {
	defer StopShared()
	UseTestCredentials()
	return m.Run()
}

// UseTestCredentials sets the process's AWS variables to the test
// credentials and region, and hides the user's AWS config and profile.
func UseTestCredentials() {
	os.Setenv("AWS_ACCESS_KEY_ID", AccessKey)
	os.Setenv("AWS_SECRET_ACCESS_KEY", SecretKey)
	os.Setenv("AWS_REGION", Region)
	os.Setenv("AWS_CONFIG_FILE", os.DevNull)
	os.Setenv("AWS_SHARED_CREDENTIALS_FILE", os.DevNull)
	os.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	for _, v := range []string{"AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_DEFAULT_PROFILE"} {
		os.Unsetenv(v)
	}
}

// Start starts a server of the test's own, with its data in a temporary
// directory, and stops it when the test ends.
func Start(t testing.TB) *Server {
	t.Helper()
	s, err := newServer(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Stop(); err != nil {
			t.Error(err)
		}
	})
	return s
}

// Launch starts a server with its data in dir, for programs that are not
// tests (benchmarks); the caller stops it.
func Launch(dir string) (*Server, error) { return newServer(dir) }

// Client returns a minio-go client with the test credentials.
func (s *Server) Client() (*miniogo.Client, error) {
	return miniogo.New(s.Addr, &miniogo.Options{
		Creds:  staticCreds(),
		Region: Region,
	})
}

func staticCreds() *credentials.Credentials { return credentials.NewStaticV4(AccessKey, SecretKey, "") }

// CreateBucket creates a bucket, retrying while the server finishes
// starting (for up to 30 s).
func (s *Server) CreateBucket(t testing.TB, name string) {
	t.Helper()
	if err := s.createBucket(name); err != nil {
		t.Fatal(err)
	}
}

func (s *Server) createBucket(name string) error {
	client, err := s.Client()
	if err != nil {
		return fmt.Errorf("miniotest: client: %w", err)
	}
	for range 60 {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err = client.MakeBucket(ctx, name, miniogo.MakeBucketOptions{Region: Region})
		cancel()
		resp := miniogo.ToErrorResponse(err)
		if err == nil || resp.Code == "BucketAlreadyOwnedByYou" {
			return nil
		}
		if starting := resp.StatusCode == 0 || resp.StatusCode >= 500; !starting {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	return fmt.Errorf("miniotest: create bucket %s: %w\n%s", name, err, s.logs)
}

// NewBucket creates a bucket with a fresh name and returns the name.
func (s *Server) NewBucket(t testing.TB) string {
	t.Helper()
	var rnd [6]byte
	rand.Read(rnd[:])
	name := "test-" + hex.EncodeToString(rnd[:])
	s.CreateBucket(t, name)
	return name
}
