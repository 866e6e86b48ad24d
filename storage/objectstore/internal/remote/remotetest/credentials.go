package remotetest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/sediment-io/sediment/storage/objectstore"
	"github.com/sediment-io/sediment/storage/objectstore/miniotest"
)

// Credentials: the store signs with the standard AWS variables and
// profiles. It changes the environment, so it must not run in parallel
// with other tests.
func Credentials(t *testing.T, srv *miniotest.Server, open Opener) {
	bucket := srv.NewBucket(t)
	proxy := miniotest.NewFaultProxy(t, srv.Addr)
	try := func(t *testing.T) error {
		t.Helper()
		s := open(t, proxy.Endpoint(), bucket, "creds", smallParts)
		_, err := s.Put(t.Context(), "k", []byte("v"), objectstore.Condition{})
		return err
	}
	t.Run("variables", func(t *testing.T) {
		if err := try(t); err != nil {
			t.Fatalf("Put with AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY of the server: %v", err)
		}
	})
	t.Run("wrong secret is refused and not retried", func(t *testing.T) {
		t.Setenv("AWS_SECRET_ACCESS_KEY", "not-the-secret")
		proxy.Reset()
		if err := try(t); err == nil {
			t.Fatal("Put signed with a wrong secret succeeded: the variable was not used")
		}
		if n := proxy.Requests("PUT"); n != 1 {
			t.Errorf("%d PUT requests with a wrong secret, want 1 (403 is not retried)", n)
		}
	})
	t.Run("session token", func(t *testing.T) {
		t.Setenv("AWS_SESSION_TOKEN", "not-a-token")
		if err := try(t); err == nil {
			t.Fatal("Put with a bogus AWS_SESSION_TOKEN succeeded: the variable was not used")
		}
	})
	t.Run("profile", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "credentials")
		profile := "[sediment-test]\naws_access_key_id = " + miniotest.AccessKey +
			"\naws_secret_access_key = " + miniotest.SecretKey + "\n"
		if err := os.WriteFile(file, []byte(profile), 0o600); err != nil {
			t.Fatal(err)
		}
		t.Setenv("AWS_ACCESS_KEY_ID", "")
		t.Setenv("AWS_SECRET_ACCESS_KEY", "")
		os.Unsetenv("AWS_ACCESS_KEY_ID")
		os.Unsetenv("AWS_SECRET_ACCESS_KEY")
		t.Setenv("AWS_SHARED_CREDENTIALS_FILE", file)
		t.Setenv("AWS_PROFILE", "sediment-test")
		if err := try(t); err != nil {
			t.Fatalf("Put with AWS_PROFILE from AWS_SHARED_CREDENTIALS_FILE: %v", err)
		}
	})
}
