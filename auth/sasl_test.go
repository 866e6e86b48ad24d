package auth

import (
	"context"
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/sediment-io/sediment/metadata"
)

// memCreds is an in-memory ScramCredentials.
type memCreds map[string]metadata.ScramCredential

func (m memCreds) ScramCredential(_ context.Context, user string, mech metadata.ScramMechanism) (metadata.ScramCredential, bool, error) {
	c, ok := m[mech.String()+"/"+user]
	return c, ok, nil
}

func (m memCreds) set(t *testing.T, mech metadata.ScramMechanism, user, password string) {
	t.Helper()
	c, err := metadata.ScramCredentialFromPassword(mech, password, 4096)
	if err != nil {
		t.Fatal(err)
	}
	m[mech.String()+"/"+user] = c
}

// TestScramRFC7677 replays RFC 7677's SCRAM-SHA-256 example exchange.
func TestScramRFC7677(t *testing.T) {
	salt, _ := base64.StdEncoding.DecodeString("W22ZaJ0SNY7soEsUEjb6gQ==")
	salted, err := metadata.ScramSaltedPassword(metadata.ScramSHA256, "pencil", salt, 4096)
	if err != nil {
		t.Fatal(err)
	}
	cred, _ := metadata.ScramCredentialFromSalted(metadata.ScramSHA256, salt, salted, 4096)
	s := newScramSession(memCreds{"SCRAM-SHA-256/user": cred}, metadata.ScramSHA256)
	s.serverNonce = func() (string, error) { return "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0", nil }
	ctx := context.Background()
	out, done, _, err := s.Step(ctx, []byte("n,,n=user,r=rOprNGfwEbeRWgbNEkqO"))
	if err != nil || done {
		t.Fatalf("client first: %v done=%v", err, done)
	}
	if want := "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"; string(out) != want {
		t.Fatalf("server first %q, want %q", out, want)
	}
	out, done, principal, err := s.Step(ctx, []byte("c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="))
	if err != nil || !done || principal != "user" {
		t.Fatalf("client final: %v done=%v principal=%q", err, done, principal)
	}
	if want := "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="; string(out) != want {
		t.Fatalf("server final %q, want %q", out, want)
	}
	if _, _, _, err := s.Step(ctx, []byte("c=biws")); !IsAuthentication(err) {
		t.Fatalf("step after success: %v", err)
	}
}

// drive runs a franz-go client mechanism against srv.
func drive(t *testing.T, srv *Server, m sasl.Mechanism) (string, error) {
	t.Helper()
	ctx := context.Background()
	sess, err := srv.Start(m.Name())
	if err != nil {
		return "", err
	}
	cs, msg, err := m.Authenticate(ctx, "127.0.0.1:9092")
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		out, done, principal, err := sess.Step(ctx, msg)
		if err != nil {
			return "", err
		}
		cdone, next, cerr := cs.Challenge(out)
		if cerr != nil {
			t.Fatalf("client refused the server: %v", cerr)
		}
		if done {
			if !cdone {
				t.Fatal("server done, client not")
			}
			return principal, nil
		}
		msg = next
	}
	t.Fatal("exchange did not finish in 5 steps")
	return "", nil
}

// TestScramFranz: franz-go's client exchanges with the server for both
// mechanisms, names with ',' and '=' escaped; a wrong password, an
// unknown user and a delegation token are refused.
func TestScramFranz(t *testing.T) {
	creds := memCreds{}
	creds.set(t, metadata.ScramSHA256, "alice", "pw256")
	creds.set(t, metadata.ScramSHA512, "a,b=c", "pw512")
	srv := &Server{Scram: creds}
	cases := []struct {
		name string
		m    sasl.Mechanism
		ok   bool
	}{
		{"sha256", scram.Auth{User: "alice", Pass: "pw256"}.AsSha256Mechanism(), true},
		{"sha512 escaped name", scram.Auth{User: "a,b=c", Pass: "pw512"}.AsSha512Mechanism(), true},
		{"authzid equal to user", scram.Auth{Zid: "alice", User: "alice", Pass: "pw256"}.AsSha256Mechanism(), true},
		{"authzid of another user", scram.Auth{Zid: "root", User: "alice", Pass: "pw256"}.AsSha256Mechanism(), false},
		{"wrong password", scram.Auth{User: "alice", Pass: "nope"}.AsSha256Mechanism(), false},
		{"other mechanism's credential", scram.Auth{User: "alice", Pass: "pw256"}.AsSha512Mechanism(), false},
		{"unknown user", scram.Auth{User: "mallory", Pass: "x"}.AsSha256Mechanism(), false},
		{"delegation token", scram.Auth{User: "alice", Pass: "pw256", IsToken: true}.AsSha256Mechanism(), false},
	}
	for _, tc := range cases {
		principal, err := drive(t, srv, tc.m)
		if tc.ok && err != nil {
			t.Errorf("%s: %v", tc.name, err)
		}
		if !tc.ok && !IsAuthentication(err) {
			t.Errorf("%s: got principal %q, err %v; want an authentication failure", tc.name, principal, err)
		}
	}
}

// TestScramNonceAndReplay: a final message with another nonce, or one
// replayed from a finished exchange into a new one, fails.
func TestScramNonceAndReplay(t *testing.T) {
	creds := memCreds{}
	creds.set(t, metadata.ScramSHA256, "alice", "pw")
	srv := &Server{Scram: creds}
	ctx := context.Background()
	m := scram.Auth{User: "alice", Pass: "pw", Nonce: []byte("fixed-client-nonce")}.AsSha256Mechanism()

	// A full exchange, recording the client's messages.
	sess, _ := srv.Start(MechScramSHA256)
	cs, first, _ := m.Authenticate(ctx, "")
	sf, _, _, err := sess.Step(ctx, first)
	if err != nil {
		t.Fatal(err)
	}
	_, final, err := cs.Challenge(sf)
	if err != nil {
		t.Fatal(err)
	}
	if _, done, _, err := sess.Step(ctx, final); err != nil || !done {
		t.Fatalf("exchange: %v", err)
	}
	if _, _, _, err := sess.Step(ctx, final); !IsAuthentication(err) {
		t.Fatalf("final replayed into the finished session: %v", err)
	}

	// The same client first message to a new session, then the old final.
	sess2, _ := srv.Start(MechScramSHA256)
	if _, _, _, err := sess2.Step(ctx, first); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := sess2.Step(ctx, final); !IsAuthentication(err) || !strings.Contains(err.Error(), "nonce") {
		t.Fatalf("replayed final: %v", err)
	}
	// The failed session stays failed.
	if _, _, _, err := sess2.Step(ctx, final); !IsAuthentication(err) {
		t.Fatalf("step after failure: %v", err)
	}

	// A wrong nonce with a correct proof shape.
	sess3, _ := srv.Start(MechScramSHA256)
	sf3, _, _, _ := sess3.Step(ctx, first)
	cs3, _, _ := m.Authenticate(ctx, "")
	_, final3, _ := cs3.Challenge(sf3)
	bad := strings.Replace(string(final3), "r=", "r=x", 1)
	if _, _, _, err := sess3.Step(ctx, []byte(bad)); !IsAuthentication(err) {
		t.Fatalf("wrong nonce: %v", err)
	}
}

func TestScramParseFirst(t *testing.T) {
	cases := []struct {
		msg  string
		user string
		ok   bool
	}{
		{"n,,n=user,r=abc", "user", true},
		{"n,a=user,n=user,r=abc", "user", true},
		{"n,,n=a=2Cb=3Dc,r=abc", "a,b=c", true},
		{"n,,n=user,r=abc,tokenauth=false", "user", true},
		{"y,,n=user,r=abc", "", false},
		{"p=tls-unique,,n=user,r=abc", "", false},
		{"n,,m=ext,n=user,r=abc", "", false},
		{"n,,n=user,r=abc,foo=bar", "", false},
		{"n,,n=a=2Xb,r=abc", "", false},
		{"n,,n=a=2,r=abc", "", false},
		{"n,,n=,r=abc", "", false},
		{"n,,n=user,r=", "", false},
		{"n,,n=user,r=a b", "", false},
		{"n,,n=user", "", false},
		{"n,,r=abc,n=user", "", false},
		{"n,x=user,n=user,r=abc", "", false},
		{"n,,n=us\x00er,r=abc", "", false},
		{"n,,n=\xff,r=abc", "", false},
		{"", "", false},
		{"n,,n=" + strings.Repeat("u", MaxNameLength+1) + ",r=abc", "", false},
	}
	for _, tc := range cases {
		m, err := parseClientFirst([]byte(tc.msg))
		if tc.ok != (err == nil) || m.user != tc.user {
			t.Errorf("%q: user %q err %v; want user %q ok %v", tc.msg, m.user, err, tc.user, tc.ok)
		}
	}
}

func TestPlain(t *testing.T) {
	users, err := ParseUsers([]byte("# users\nalice:pw\n\n  \nbob:p:w with spaces \r\n"), "test")
	if err != nil {
		t.Fatal(err)
	}
	srv := &Server{Plain: users}
	cases := []struct {
		msg, principal string
	}{
		{"\x00alice\x00pw", "alice"},
		{"alice\x00alice\x00pw", "alice"},
		{"\x00bob\x00p:w with spaces ", "bob"},
		{"bob\x00alice\x00pw", ""},  // authzid of another user
		{"\x00alice\x00pw2", ""},    // wrong password
		{"\x00alice\x00", ""},       // empty password
		{"\x00\x00pw", ""},          // empty user
		{"alice\x00pw", ""},         // two fields
		{"alicepw", ""},             // no NUL at all
		{"\x00alice\x00pw\x00", ""}, // four fields
		{"\x00alice\x00p\x00w", ""}, // NUL in the password
		{"\x00mallory\x00pw", ""},   // unknown user
		{"\x00al\xffice\x00pw", ""}, // not UTF-8
		{"", ""},
	}
	for _, tc := range cases {
		sess, err := srv.Start(MechPlain)
		if err != nil {
			t.Fatal(err)
		}
		_, done, principal, err := sess.Step(context.Background(), []byte(tc.msg))
		if tc.principal != "" && (err != nil || !done || principal != tc.principal) {
			t.Errorf("%q: done %v principal %q err %v", tc.msg, done, principal, err)
		}
		if tc.principal == "" && !IsAuthentication(err) {
			t.Errorf("%q: err %v, want an authentication failure", tc.msg, err)
		}
		if _, _, _, err := sess.Step(context.Background(), []byte("\x00alice\x00pw")); !IsAuthentication(err) {
			t.Errorf("%q: second step %v", tc.msg, err)
		}
	}
	if _, err := srv.Start("GSSAPI"); !errors.Is(err, ErrUnsupportedMechanism) {
		t.Errorf("GSSAPI: %v", err)
	}
	if got := srv.Mechanisms(); len(got) != 1 || got[0] != MechPlain {
		t.Errorf("mechanisms %v", got)
	}
}

func TestParseUsersErrors(t *testing.T) {
	for _, content := range []string{"alice", ":pw", "alice:", "alice:a\nalice:b"} {
		if _, err := ParseUsers([]byte(content), "f"); err == nil {
			t.Errorf("%q parsed", content)
		}
	}
}

// TestScramPlain: PLAIN passwords checked against SCRAM credentials.
func TestScramPlain(t *testing.T) {
	creds := memCreds{}
	creds.set(t, metadata.ScramSHA256, "alice", "pw")
	creds.set(t, metadata.ScramSHA512, "bob", "pw2")
	p := ScramPlain{Creds: creds}
	for _, tc := range []struct {
		user, pw string
		ok       bool
	}{{"alice", "pw", true}, {"bob", "pw2", true}, {"alice", "pw2", false}, {"carol", "pw", false}} {
		ok, err := p.AuthenticatePlain(context.Background(), tc.user, tc.pw)
		if err != nil || ok != tc.ok {
			t.Errorf("%s/%s: %v %v", tc.user, tc.pw, ok, err)
		}
	}
}

func FuzzParsePlain(f *testing.F) {
	for _, s := range []string{"\x00alice\x00pw", "a\x00a\x00p", "", "\x00\x00", "x\x00y"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := ParsePlain(b)
		if err != nil {
			if !IsAuthentication(err) {
				t.Fatalf("error not an authentication failure: %v", err)
			}
			return
		}
		if m.User == "" || m.Password == "" || (m.AuthzID != "" && m.AuthzID != m.User) {
			t.Fatalf("accepted %+v", m)
		}
	})
}

func FuzzScramMessages(f *testing.F) {
	for _, s := range []string{"n,,n=user,r=abc", "n,a=u,n=u,r=x,tokenauth=true", "c=biws,r=abc,p=dHzb", "n,,n=a=2C,r=1"} {
		f.Add([]byte(s))
	}
	creds := memCreds{}
	c, _ := metadata.ScramCredentialFromSalted(metadata.ScramSHA256, []byte("salt"), make([]byte, 32), 4096)
	creds["SCRAM-SHA-256/user"] = c
	f.Fuzz(func(t *testing.T, b []byte) {
		if m, err := parseClientFirst(b); err == nil {
			if m.user == "" || m.nonce == "" || !strings.HasPrefix(string(b), m.gs2Header) {
				t.Fatalf("accepted %+v", m)
			}
		}
		_, _ = parseClientFinal(b)
		// A whole session never panics and never succeeds on one message.
		s := newScramSession(creds, metadata.ScramSHA256)
		if _, done, _, _ := s.Step(context.Background(), b); done {
			t.Fatal("done after one message")
		}
		if _, done, _, _ := s.Step(context.Background(), b); done {
			t.Fatal("done with the client's first message as its final")
		}
	})
}

// TestScramUnknownUser: an unknown user gets a server first message, the
// same salt each time, and fails only at the proof, with the message a
// wrong password gets.
func TestScramUnknownUser(t *testing.T) {
	creds := memCreds{}
	creds.set(t, metadata.ScramSHA256, "alice", "pw")
	srv := &Server{Scram: creds}
	ctx := context.Background()
	var salts []string
	var errs []string
	for _, user := range []string{"mallory", "mallory", "alice"} {
		m := scram.Auth{User: user, Pass: "wrong"}.AsSha256Mechanism()
		sess, _ := srv.Start(MechScramSHA256)
		cs, first, _ := m.Authenticate(ctx, "")
		sf, _, _, err := sess.Step(ctx, first)
		if err != nil {
			t.Fatalf("%s: first step: %v", user, err)
		}
		salts = append(salts, strings.Split(string(sf), ",")[1])
		_, final, err := cs.Challenge(sf)
		if err != nil {
			t.Fatal(err)
		}
		_, _, _, err = sess.Step(ctx, final)
		if !IsAuthentication(err) {
			t.Fatalf("%s: final step: %v", user, err)
		}
		errs = append(errs, err.Error())
	}
	if salts[0] != salts[1] || salts[0] == salts[2] {
		t.Fatalf("salts %v: want one stable made-up salt", salts)
	}
	if errs[0] != errs[2] {
		t.Fatalf("unknown user %q, wrong password %q", errs[0], errs[2])
	}
}
