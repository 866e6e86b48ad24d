package auth

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"hash"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/sediment-io/sediment/metadata"
)

// maxScramMessage bounds a SCRAM client message: a name, a nonce, a proof
// and a few extensions fit easily.
const maxScramMessage = 4 * 1024

// scramState is where a SCRAM exchange stands.
type scramState int

const (
	scramWantClientFirst scramState = iota
	scramWantClientFinal
	scramFinished // succeeded or failed: every later step is refused
)

// scramSession is the server side of one SCRAM exchange (RFC 5802, RFC
// 7677), as Kafka's ScramSaslServer: no channel binding, the tokenauth
// extension the only one known (and refused, there being no delegation
// tokens), the client proof checked in constant time, and one exchange
// per session so a replayed final message never meets its nonce again.
type scramSession struct {
	creds ScramCredentials
	mech  metadata.ScramMechanism
	state scramState

	user        string
	gs2Header   string
	cred        metadata.ScramCredential
	nonce       string // client nonce + server nonce
	clientFirst string // client-first-message-bare
	serverFirst string

	// mockKey, when set, makes an unknown user's exchange run to its end
	// on a made-up credential (RFC 5802 section 5.1), so that neither the
	// answer nor its timing tells an unknown user from a wrong password.
	// Without it an unknown user fails at once, as in Kafka.
	mockKey []byte
	mock    bool

	// serverNonce makes the server's part of the nonce: 24 random bytes,
	// URL-safe base64 (no ','); tests replace it to replay RFC vectors.
	serverNonce func() (string, error)
}

func newScramSession(creds ScramCredentials, m metadata.ScramMechanism) *scramSession {
	return &scramSession{creds: creds, mech: m, serverNonce: randomNonce}
}

func randomNonce() (string, error) {
	var rnd [24]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return "", fmt.Errorf("auth: scram nonce: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(rnd[:]), nil
}

func (s *scramSession) Step(ctx context.Context, client []byte) ([]byte, bool, string, error) {
	state := s.state
	s.state = scramFinished // until a step succeeds, the session is over
	switch state {
	case scramWantClientFirst:
		out, err := s.first(ctx, client)
		if err != nil {
			return nil, false, "", err
		}
		s.state = scramWantClientFinal
		return out, false, "", nil
	case scramWantClientFinal:
		out, err := s.final(client)
		if err != nil {
			return nil, false, "", err
		}
		return out, true, s.user, nil
	}
	return nil, false, "", authFailed("%s exchange already finished", s.mech)
}

func (s *scramSession) first(ctx context.Context, client []byte) ([]byte, error) {
	m, err := parseClientFirst(client)
	if err != nil {
		return nil, err
	}
	if m.tokenAuth {
		return nil, authFailed("delegation token authentication is not supported")
	}
	if m.authzID != "" && m.authzID != m.user {
		return nil, authFailed("Client requested an authorization id that is different from username")
	}
	cred, ok, err := s.creds.ScramCredential(ctx, m.user, s.mech)
	if err != nil {
		return nil, fmt.Errorf("auth: %s credential of %q: %w", s.mech, m.user, err)
	}
	if !ok && s.mockKey == nil {
		return nil, authFailed("Invalid user credentials")
	}
	if !ok {
		cred, s.mock = s.mockCredential(m.user), true
	}
	if cred.Iterations < metadata.ScramMinIterations {
		return nil, authFailed("Iterations %d is less than the minimum %d for %s", cred.Iterations, metadata.ScramMinIterations, s.mech)
	}
	sn, err := s.serverNonce()
	if err != nil {
		return nil, err
	}
	s.user, s.gs2Header, s.cred, s.clientFirst = m.user, m.gs2Header, cred, m.bare
	s.nonce = m.nonce + sn
	s.serverFirst = "r=" + s.nonce + ",s=" + base64.StdEncoding.EncodeToString(cred.Salt) + ",i=" + strconv.Itoa(int(cred.Iterations))
	return []byte(s.serverFirst), nil
}

func (s *scramSession) final(client []byte) ([]byte, error) {
	m, err := parseClientFinal(client)
	if err != nil {
		return nil, err
	}
	if m.channel != base64.StdEncoding.EncodeToString([]byte(s.gs2Header)) {
		return nil, authFailed("channel binding does not match the client's first message")
	}
	if m.nonce != s.nonce {
		return nil, authFailed("Invalid client nonce in the final client message.")
	}
	h := s.mech.Hash()
	authMessage := s.clientFirst + "," + s.serverFirst + "," + m.withoutProof
	sig := mac(h, s.cred.StoredKey, authMessage)
	if len(m.proof) != len(sig) {
		return nil, authFailed("Invalid client credentials")
	}
	clientKey := make([]byte, len(sig))
	for i := range sig {
		clientKey[i] = m.proof[i] ^ sig[i]
	}
	d := h()
	d.Write(clientKey)
	if !hmac.Equal(d.Sum(nil), s.cred.StoredKey) || s.mock {
		return nil, authFailed("Invalid client credentials")
	}
	return []byte("v=" + base64.StdEncoding.EncodeToString(mac(h, s.cred.ServerKey, authMessage))), nil
}

// mockCredential makes up a stable credential for an unknown user: the
// same salt on every attempt, as a real user's would be, and keys that
// match no password.
func (s *scramSession) mockCredential(user string) metadata.ScramCredential {
	h := s.mech.Hash()
	salt := mac(h, s.mockKey, "salt/"+s.mech.String()+"/"+user)
	stored := mac(h, s.mockKey, "stored/"+s.mech.String()+"/"+user)
	return metadata.ScramCredential{Salt: salt, StoredKey: stored, ServerKey: stored, Iterations: metadata.ScramMinIterations}
}

func mac(h func() hash.Hash, key []byte, msg string) []byte {
	m := hmac.New(h, key)
	m.Write([]byte(msg))
	return m.Sum(nil)
}

// clientFirst is a parsed client-first-message.
type clientFirst struct {
	gs2Header string // "n,," or "n,a=NAME,"
	authzID   string
	user      string
	nonce     string
	bare      string // client-first-message-bare, for the AuthMessage
	tokenAuth bool
}

// parseClientFirst parses gs2-header client-first-message-bare:
//
//	n,[a=saslname],n=saslname,r=nonce[,ext=value]*
//
// Channel binding ("y", "p=") and the reserved "m=" attribute are
// refused; of the extensions only tokenauth is known.
func parseClientFirst(b []byte) (clientFirst, error) {
	if len(b) > maxScramMessage {
		return clientFirst{}, authFailed("SCRAM message of %d bytes is too long", len(b))
	}
	if !utf8.Valid(b) {
		return clientFirst{}, authFailed("SCRAM message is not UTF-8")
	}
	msg := string(b)
	if !strings.HasPrefix(msg, "n,") {
		return clientFirst{}, authFailed("channel binding is not supported: the message must start with \"n,\"")
	}
	rest := msg[2:]
	var m clientFirst
	authz, bare, ok := strings.Cut(rest, ",")
	if !ok {
		return clientFirst{}, authFailed("invalid SCRAM client first message")
	}
	if authz != "" {
		v, ok := strings.CutPrefix(authz, "a=")
		if !ok {
			return clientFirst{}, authFailed("invalid SCRAM authorization id")
		}
		name, err := decodeSaslName(v)
		if err != nil {
			return clientFirst{}, err
		}
		m.authzID = name
	}
	m.gs2Header = msg[:len(msg)-len(bare)]
	m.bare = bare
	fields := strings.Split(bare, ",")
	if len(fields) < 2 {
		return clientFirst{}, authFailed("invalid SCRAM client first message")
	}
	if strings.HasPrefix(fields[0], "m=") {
		return clientFirst{}, authFailed("SCRAM mandatory extensions are not supported")
	}
	v, ok := strings.CutPrefix(fields[0], "n=")
	if !ok {
		return clientFirst{}, authFailed("SCRAM client first message has no user name")
	}
	user, err := decodeSaslName(v)
	if err != nil {
		return clientFirst{}, err
	}
	m.user = user
	if m.nonce, ok = strings.CutPrefix(fields[1], "r="); !ok || !validNonce(m.nonce) {
		return clientFirst{}, authFailed("SCRAM client first message has no valid nonce")
	}
	for _, ext := range fields[2:] {
		k, val, ok := strings.Cut(ext, "=")
		if !ok || !validExtKey(k) || val == "" {
			return clientFirst{}, authFailed("invalid SCRAM extension")
		}
		if k != "tokenauth" {
			return clientFirst{}, authFailed("Unsupported extensions will not be processed: %s", k)
		}
		m.tokenAuth = strings.EqualFold(val, "true")
	}
	return m, nil
}

// decodeSaslName undoes RFC 5802's escaping of a name: "=2C" is ',' and
// "=3D" is '='; any other '=' and any ',' or NUL are invalid. Names are
// compared byte for byte afterwards, as Kafka does (no SASLprep
// normalization).
func decodeSaslName(s string) (string, error) {
	if s == "" {
		return "", authFailed("empty SCRAM user name")
	}
	var sb strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '=':
			switch {
			case strings.HasPrefix(s[i:], "=2C"):
				sb.WriteByte(',')
			case strings.HasPrefix(s[i:], "=3D"):
				sb.WriteByte('=')
			default:
				return "", authFailed("invalid escape in SCRAM user name")
			}
			i += 2
		case ',', 0:
			return "", authFailed("invalid character in SCRAM user name")
		default:
			sb.WriteByte(c)
		}
	}
	if sb.Len() > MaxNameLength {
		return "", authFailed("SCRAM user name longer than %d bytes", MaxNameLength)
	}
	return sb.String(), nil
}

// validNonce: printable ASCII except ',' (RFC 5802's printable).
func validNonce(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x21 || c > 0x7e || c == ',' {
			return false
		}
	}
	return true
}

func validExtKey(k string) bool {
	if k == "" || len(k) > 40 {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
			return false
		}
	}
	return true
}

// clientFinal is a parsed client-final-message.
type clientFinal struct {
	channel      string // base64 of the gs2 header, as sent
	nonce        string
	proof        []byte
	withoutProof string // client-final-message-without-proof
}

// parseClientFinal parses c=base64,r=nonce[,ext=value]*,p=base64.
func parseClientFinal(b []byte) (clientFinal, error) {
	if len(b) > maxScramMessage {
		return clientFinal{}, authFailed("SCRAM message of %d bytes is too long", len(b))
	}
	msg := string(b)
	i := strings.LastIndex(msg, ",p=")
	if i < 0 {
		return clientFinal{}, authFailed("SCRAM client final message has no proof")
	}
	var m clientFinal
	m.withoutProof = msg[:i]
	proof, err := base64.StdEncoding.Strict().DecodeString(msg[i+3:])
	if err != nil || len(proof) == 0 {
		return clientFinal{}, authFailed("SCRAM client proof is not base64")
	}
	m.proof = proof
	fields := strings.Split(m.withoutProof, ",")
	if len(fields) < 2 {
		return clientFinal{}, authFailed("invalid SCRAM client final message")
	}
	var ok bool
	if m.channel, ok = strings.CutPrefix(fields[0], "c="); !ok {
		return clientFinal{}, authFailed("SCRAM client final message has no channel binding")
	}
	if m.nonce, ok = strings.CutPrefix(fields[1], "r="); !ok || !validNonce(m.nonce) {
		return clientFinal{}, authFailed("SCRAM client final message has no valid nonce")
	}
	for _, ext := range fields[2:] {
		k, _, ok := strings.Cut(ext, "=")
		if !ok || !validExtKey(k) {
			return clientFinal{}, authFailed("invalid SCRAM extension")
		}
		if k != "tokenauth" {
			return clientFinal{}, authFailed("Unsupported extensions will not be processed: %s", k)
		}
	}
	return m, nil
}
