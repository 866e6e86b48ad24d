package auth

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/sediment-io/sediment/metadata"
)

var _ ScramCredentials = (*metadata.Store)(nil)

// TestScramOnStore: a credential set as AlterUserScramCredentials sets it
// (salt and salted password computed by the client) logs in through
// franz-go's client, over SCRAM and, with ScramPlain, over PLAIN.
func TestScramOnStore(t *testing.T) {
	kv, err := metadata.OpenBolt(filepath.Join(t.TempDir(), "meta.db"))
	if err != nil {
		t.Fatal(err)
	}
	store := metadata.NewStore(kv)
	t.Cleanup(func() { store.Close() })
	salt := []byte("0123456789abcdef")
	salted, err := metadata.ScramSaltedPassword(metadata.ScramSHA512, "s3cret", salt, 8192)
	if err != nil {
		t.Fatal(err)
	}
	res, err := store.AlterScramCredentials(context.Background(), nil, []metadata.ScramUpsertion{
		{User: "alice", Mechanism: metadata.ScramSHA512, Iterations: 8192, Salt: salt, SaltedPassword: salted},
	})
	if err != nil || res[0].ErrorCode != 0 {
		t.Fatalf("upsert: %v %+v", err, res)
	}
	srv := &Server{Scram: store, Plain: ScramPlain{Creds: store}}
	if p, err := drive(t, srv, scram.Auth{User: "alice", Pass: "s3cret"}.AsSha512Mechanism()); err != nil || p != "alice" {
		t.Fatalf("SCRAM-SHA-512 login: %q %v", p, err)
	}
	if _, err := drive(t, srv, scram.Auth{User: "alice", Pass: "s3cret"}.AsSha256Mechanism()); !IsAuthentication(err) {
		t.Fatalf("SCRAM-SHA-256 without a SHA-256 credential: %v", err)
	}
	sess, _ := srv.Start(MechPlain)
	if _, done, p, err := sess.Step(context.Background(), []byte("\x00alice\x00s3cret")); err != nil || !done || p != "alice" {
		t.Fatalf("PLAIN login: %q %v", p, err)
	}
}
