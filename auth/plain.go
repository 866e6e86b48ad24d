package auth

import (
	"bufio"
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/sha512"
	"fmt"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/sediment-io/sediment/metadata"
)

// MaxNameLength bounds a user name (and so a principal) in bytes: a longer
// one fails the exchange before any lookup.
const MaxNameLength = 1024

// maxPlainMessage bounds a PLAIN message: two names and a password.
const maxPlainMessage = 3*MaxNameLength + 2

// PlainMessage is a parsed RFC 4616 PLAIN message.
type PlainMessage struct {
	AuthzID, User, Password string
}

// ParsePlain parses authzid NUL user NUL password strictly, as Kafka's
// PlainSaslServer: exactly three fields, valid UTF-8, a non-empty user and
// password, no NUL inside a field, and an authorization id that is empty
// or the user itself (Kafka does not let one user act as another).
func ParsePlain(msg []byte) (PlainMessage, error) {
	if len(msg) > maxPlainMessage {
		return PlainMessage{}, authFailed("SASL/PLAIN message of %d bytes is too long", len(msg))
	}
	if !utf8.Valid(msg) {
		return PlainMessage{}, authFailed("SASL/PLAIN message is not UTF-8")
	}
	parts := bytes.Split(msg, []byte{0})
	if len(parts) != 3 {
		return PlainMessage{}, authFailed("Invalid SASL/PLAIN response: expected 3 tokens, got %d", len(parts))
	}
	m := PlainMessage{AuthzID: string(parts[0]), User: string(parts[1]), Password: string(parts[2])}
	switch {
	case m.User == "":
		return PlainMessage{}, authFailed("username not specified")
	case m.Password == "":
		return PlainMessage{}, authFailed("password not specified")
	case len(m.User) > MaxNameLength:
		return PlainMessage{}, authFailed("username longer than %d bytes", MaxNameLength)
	case m.AuthzID != "" && m.AuthzID != m.User:
		return PlainMessage{}, authFailed("Client requested an authorization id that is different from username")
	}
	return m, nil
}

// plainSession is a one-message exchange.
type plainSession struct {
	auth PlainAuthenticator
	used bool
}

func (s *plainSession) Step(ctx context.Context, client []byte) ([]byte, bool, string, error) {
	if s.used {
		return nil, false, "", authFailed("SASL/PLAIN exchange already finished")
	}
	s.used = true
	m, err := ParsePlain(client)
	if err != nil {
		return nil, false, "", err
	}
	ok, err := s.auth.AuthenticatePlain(ctx, m.User, m.Password)
	if err != nil {
		return nil, false, "", fmt.Errorf("auth: PLAIN lookup of %q: %w", m.User, err)
	}
	if !ok {
		return nil, false, "", authFailed("Invalid username or password")
	}
	return nil, true, m.User, nil
}

// UsersFile is a PLAIN user list read from a file (the format is in the
// package doc). Passwords are kept as SHA-512 digests and compared in
// constant time.
type UsersFile struct {
	users map[string][]byte
}

// LoadUsersFile reads a users file.
func LoadUsersFile(path string) (*UsersFile, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("auth: users file: %w", err)
	}
	return ParseUsers(b, path)
}

// ParseUsers parses the content of a users file; name appears in errors.
func ParseUsers(content []byte, name string) (*UsersFile, error) {
	u := &UsersFile{users: map[string][]byte{}}
	sc := bufio.NewScanner(bytes.NewReader(content))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSuffix(sc.Text(), "\r")
		if strings.TrimSpace(line) == "" || strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		user, pw, ok := strings.Cut(line, ":")
		switch {
		case !ok:
			return nil, fmt.Errorf("auth: users file %s line %d: no ':' between user and password", name, n)
		case user == "" || len(user) > MaxNameLength:
			return nil, fmt.Errorf("auth: users file %s line %d: user name empty or longer than %d bytes", name, n, MaxNameLength)
		case pw == "":
			return nil, fmt.Errorf("auth: users file %s line %d: empty password for %q", name, n, user)
		case u.users[user] != nil:
			return nil, fmt.Errorf("auth: users file %s line %d: user %q given twice", name, n, user)
		}
		d := sha512.Sum512([]byte(pw))
		u.users[user] = d[:]
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("auth: users file %s: %w", name, err)
	}
	return u, nil
}

// AuthenticatePlain implements PlainAuthenticator.
func (u *UsersFile) AuthenticatePlain(_ context.Context, user, password string) (bool, error) {
	d := sha512.Sum512([]byte(password))
	want, ok := u.users[user]
	if !ok {
		// Compare anyway so an unknown user costs what a known one does.
		want = make([]byte, len(d))
	}
	return hmac.Equal(d[:], want) && ok, nil
}

// ScramPlain checks PLAIN passwords against the SCRAM credentials in
// metadata, so `broker users set-password` serves both: the password is
// salted with the stored salt and iterations and its StoredKey compared
// in constant time. SCRAM-SHA-512 is tried first, then SCRAM-SHA-256.
type ScramPlain struct {
	Creds ScramCredentials
}

// AuthenticatePlain implements PlainAuthenticator.
func (p ScramPlain) AuthenticatePlain(ctx context.Context, user, password string) (bool, error) {
	for _, m := range []metadata.ScramMechanism{metadata.ScramSHA512, metadata.ScramSHA256} {
		c, ok, err := p.Creds.ScramCredential(ctx, user, m)
		if err != nil {
			return false, err
		}
		if !ok {
			continue
		}
		salted, err := metadata.ScramSaltedPassword(m, password, c.Salt, int(c.Iterations))
		if err != nil {
			return false, err
		}
		got, err := metadata.ScramCredentialFromSalted(m, c.Salt, salted, c.Iterations)
		if err != nil {
			return false, err
		}
		return hmac.Equal(got.StoredKey, c.StoredKey), nil
	}
	// An unknown user costs one derivation too.
	_, _ = metadata.ScramSaltedPassword(metadata.ScramSHA256, password, sha256.New().Sum(nil), metadata.ScramMinIterations)
	return false, nil
}
