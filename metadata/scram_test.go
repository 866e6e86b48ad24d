package metadata_test

import (
	"bytes"
	"context"
	"fmt"
	"reflect"
	"testing"

	"github.com/sediment-io/sediment/metadata"
	"github.com/sediment-io/sediment/metadata/etcdkv/etcdtest"
)

// TestScramCredentialsBolt and TestScramCredentialsEtcd run one body on
// both backends.
func TestScramCredentialsBolt(t *testing.T) { testScramCredentials(t, newStore(t)) }

func TestScramCredentialsEtcd(t *testing.T) {
	endpoint, _ := etcdtest.Start(t)
	s := metadata.NewStore(etcdtest.OpenKV(t, endpoint, "scram"))
	testScramCredentials(t, s)
}

func upsert(t *testing.T, user string, m metadata.ScramMechanism, password string, iter int32) metadata.ScramUpsertion {
	t.Helper()
	salt := []byte("salt-of-" + user)
	salted, err := metadata.ScramSaltedPassword(m, password, salt, int(iter))
	if err != nil {
		t.Fatal(err)
	}
	return metadata.ScramUpsertion{User: user, Mechanism: m, Iterations: iter, Salt: salt, SaltedPassword: salted}
}

func testScramCredentials(t *testing.T, s *metadata.Store) {
	ctx := context.Background()
	res, err := s.AlterScramCredentials(ctx, nil, []metadata.ScramUpsertion{
		upsert(t, "alice", metadata.ScramSHA256, "pw", 4096),
		upsert(t, "a/b", metadata.ScramSHA512, "pw2", 8192),
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.ErrorCode != 0 {
			t.Fatalf("upsert %s: %d %s", r.User, r.ErrorCode, r.ErrorMessage)
		}
	}
	// The stored keys are the derived ones, never the salted password.
	c, ok, err := s.ScramCredential(ctx, "alice", metadata.ScramSHA256)
	if err != nil || !ok {
		t.Fatalf("credential of alice: %v %v", ok, err)
	}
	want, _ := metadata.ScramCredentialFromSalted(metadata.ScramSHA256, c.Salt, mustSalted(t, metadata.ScramSHA256, "pw", c.Salt, 4096), 4096)
	if !reflect.DeepEqual(c, want) {
		t.Fatalf("credential %+v, want %+v", c, want)
	}
	if _, ok, _ := s.ScramCredential(ctx, "alice", metadata.ScramSHA512); ok {
		t.Fatal("alice has a SHA-512 credential she was never given")
	}

	all, err := s.DescribeScramCredentials(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	wantAll := []metadata.ScramResult{
		{User: "a/b", Credentials: []metadata.ScramCredentialInfo{{Mechanism: metadata.ScramSHA512, Iterations: 8192}}},
		{User: "alice", Credentials: []metadata.ScramCredentialInfo{{Mechanism: metadata.ScramSHA256, Iterations: 4096}}},
	}
	if !reflect.DeepEqual(all, wantAll) {
		t.Fatalf("describe all: %+v\nwant %+v", all, wantAll)
	}
	some, err := s.DescribeScramCredentials(ctx, []string{"alice", "bob", "x", "x"})
	if err != nil {
		t.Fatal(err)
	}
	codes := map[string]int16{}
	for _, r := range some {
		codes[r.User] = r.ErrorCode
	}
	if !reflect.DeepEqual(codes, map[string]int16{"alice": 0, "bob": metadata.ScramErrResourceNotFound, "x": metadata.ScramErrDuplicateResource}) {
		t.Fatalf("describe some: %+v", some)
	}

	bad := []metadata.ScramUpsertion{
		upsert(t, "low", metadata.ScramSHA256, "pw", 4095),
		upsert(t, "high", metadata.ScramSHA512, "pw", 16385),
		{User: "mech", Mechanism: metadata.ScramUnknown, Iterations: 4096},
		{User: "", Mechanism: metadata.ScramSHA256, Iterations: 4096},
		upsert(t, "twice", metadata.ScramSHA256, "pw", 4096),
		upsert(t, "twice", metadata.ScramSHA512, "pw", 4096),
		upsert(t, "carol", metadata.ScramSHA512, "pw3", 4096),
	}
	res, err = s.AlterScramCredentials(ctx, []metadata.ScramDeletion{
		{User: "nobody", Mechanism: metadata.ScramSHA256},
		{User: "alice", Mechanism: metadata.ScramSHA256},
	}, bad)
	if err != nil {
		t.Fatal(err)
	}
	codes = map[string]int16{}
	for _, r := range res {
		codes[r.User] = r.ErrorCode
	}
	wantCodes := map[string]int16{
		"nobody": metadata.ScramErrResourceNotFound, "alice": 0,
		"low": metadata.ScramErrUnacceptable, "high": metadata.ScramErrUnacceptable,
		"mech": metadata.ScramErrUnsupportedMechanism, "": metadata.ScramErrUnacceptable,
		"twice": metadata.ScramErrDuplicateResource, "carol": 0,
	}
	if !reflect.DeepEqual(codes, wantCodes) {
		t.Fatalf("alter codes %v\nwant %v", codes, wantCodes)
	}
	all, err = s.DescribeScramCredentials(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var users []string
	for _, r := range all {
		users = append(users, r.User)
	}
	if !reflect.DeepEqual(users, []string{"a/b", "carol"}) {
		t.Fatalf("users after alter: %v", users)
	}

	// More users than one etcd transaction takes (128 writes).
	one := upsert(t, "", metadata.ScramSHA512, "pw", 4096)
	var many []metadata.ScramUpsertion
	for i := range 300 {
		u := one
		u.User = fmt.Sprintf("user-%03d", i)
		many = append(many, u)
	}
	res, err = s.AlterScramCredentials(ctx, nil, many)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.ErrorCode != 0 {
			t.Fatalf("bulk upsert %s: %d %s", r.User, r.ErrorCode, r.ErrorMessage)
		}
	}
	if all, err = s.DescribeScramCredentials(ctx, nil); err != nil || len(all) != 302 {
		t.Fatalf("after the bulk upsert: %d users, %v", len(all), err)
	}
}

func mustSalted(t *testing.T, m metadata.ScramMechanism, pw string, salt []byte, iter int) []byte {
	t.Helper()
	b, err := metadata.ScramSaltedPassword(m, pw, salt, iter)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestScramCredentialFromPassword: a fresh salt each time, keys that match
// a derivation from the same salt.
func TestScramCredentialFromPassword(t *testing.T) {
	a, err := metadata.ScramCredentialFromPassword(metadata.ScramSHA512, "secret", 4096)
	if err != nil {
		t.Fatal(err)
	}
	b, err := metadata.ScramCredentialFromPassword(metadata.ScramSHA512, "secret", 4096)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(a.Salt, b.Salt) || len(a.Salt) != 64 || len(a.StoredKey) != 64 {
		t.Fatalf("salts %x %x", a.Salt, b.Salt)
	}
	again, _ := metadata.ScramCredentialFromSalted(metadata.ScramSHA512, a.Salt, mustSalted(t, metadata.ScramSHA512, "secret", a.Salt, 4096), 4096)
	if !reflect.DeepEqual(a, again) {
		t.Fatal("derivation is not reproducible from the salt")
	}
}
