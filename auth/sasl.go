package auth

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"sync"

	"github.com/sediment-io/sediment/metadata"
)

// ErrAuthentication wraps every failed exchange: wrong password, unknown
// user, malformed message. Its message may be shown to the client in
// SaslAuthenticate's error message (SASL_AUTHENTICATION_FAILED); it never
// says which of user or password was wrong.
var ErrAuthentication = errors.New("authentication failed")

// ErrUnsupportedMechanism is returned by Start for a mechanism this server
// does not offer (UNSUPPORTED_SASL_MECHANISM in SaslHandshake).
var ErrUnsupportedMechanism = errors.New("auth: unsupported SASL mechanism")

// IsAuthentication reports whether err is a failed exchange.
func IsAuthentication(err error) bool { return errors.Is(err, ErrAuthentication) }

func authFailed(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrAuthentication, fmt.Sprintf(format, args...))
}

// The SASL mechanism names, as SaslHandshake carries them.
const (
	MechPlain       = "PLAIN"
	MechScramSHA256 = "SCRAM-SHA-256"
	MechScramSHA512 = "SCRAM-SHA-512"
)

// Session is one SASL exchange on one connection. Step takes the client's
// next message and returns the server's answer; done is true with the
// authenticated principal's name (the user, without "User:") when the
// exchange succeeded. Any error ends the session.
type Session interface {
	Step(ctx context.Context, client []byte) (server []byte, done bool, principal string, err error)
}

// PlainAuthenticator checks a PLAIN user's password.
type PlainAuthenticator interface {
	// AuthenticatePlain reports whether password is user's; an unknown
	// user is false, not an error.
	AuthenticatePlain(ctx context.Context, user, password string) (bool, error)
}

// ScramCredentials looks up SCRAM credentials; *metadata.Store is one.
type ScramCredentials interface {
	ScramCredential(ctx context.Context, user string, m metadata.ScramMechanism) (metadata.ScramCredential, bool, error)
}

// Server starts sessions for the enabled mechanisms: PLAIN when Plain is
// set, both SCRAM mechanisms when Scram is set. A Server must not be
// copied after its first Start.
type Server struct {
	Plain PlainAuthenticator
	Scram ScramCredentials

	once    sync.Once
	mockKey []byte // keys the made-up salts of unknown SCRAM users
}

// Mechanisms returns the enabled mechanisms, for SaslHandshake's answer.
func (s *Server) Mechanisms() []string {
	var out []string
	if s.Plain != nil {
		out = append(out, MechPlain)
	}
	if s.Scram != nil {
		out = append(out, MechScramSHA256, MechScramSHA512)
	}
	return out
}

// Start begins an exchange for mechanism.
func (s *Server) Start(mechanism string) (Session, error) {
	switch mechanism {
	case MechPlain:
		if s.Plain != nil {
			return &plainSession{auth: s.Plain}, nil
		}
	case MechScramSHA256, MechScramSHA512:
		if s.Scram != nil {
			s.once.Do(func() {
				s.mockKey = make([]byte, 32)
				_, _ = rand.Read(s.mockKey) // crypto/rand.Read never fails
			})
			sess := newScramSession(s.Scram, metadata.ParseScramMechanism(mechanism))
			sess.mockKey = s.mockKey
			return sess, nil
		}
	}
	return nil, fmt.Errorf("%w: %q", ErrUnsupportedMechanism, mechanism)
}
