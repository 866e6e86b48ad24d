package metadata

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"crypto/sha512"
	"fmt"
	"hash"
	"net/url"
	"sort"
	"strings"
)

// ScramMechanism is a SCRAM mechanism as KIP-554 numbers it on the wire
// (DescribeUserScramCredentials, AlterUserScramCredentials).
type ScramMechanism int8

// The SCRAM mechanisms; ScramUnknown is what a request naming any other
// number decodes to.
const (
	ScramUnknown ScramMechanism = 0
	ScramSHA256  ScramMechanism = 1
	ScramSHA512  ScramMechanism = 2
)

// The iteration bounds Kafka enforces for both mechanisms
// (ScramMechanism.minIterations, AlterUserScramCredentials' maximum).
const (
	ScramMinIterations = 4096
	ScramMaxIterations = 16384
)

// ParseScramMechanism returns the mechanism of a SASL mechanism name
// ("SCRAM-SHA-256", "SCRAM-SHA-512"); ScramUnknown for any other.
func ParseScramMechanism(name string) ScramMechanism {
	switch name {
	case "SCRAM-SHA-256":
		return ScramSHA256
	case "SCRAM-SHA-512":
		return ScramSHA512
	}
	return ScramUnknown
}

// String returns the SASL mechanism name.
func (m ScramMechanism) String() string {
	switch m {
	case ScramSHA256:
		return "SCRAM-SHA-256"
	case ScramSHA512:
		return "SCRAM-SHA-512"
	}
	return fmt.Sprintf("SCRAM-UNKNOWN(%d)", int8(m))
}

// Valid reports whether m is a known mechanism.
func (m ScramMechanism) Valid() bool { return m == ScramSHA256 || m == ScramSHA512 }

// Hash returns the mechanism's hash constructor; nil for an unknown one.
func (m ScramMechanism) Hash() func() hash.Hash {
	switch m {
	case ScramSHA256:
		return sha256.New
	case ScramSHA512:
		return sha512.New
	}
	return nil
}

// ScramCredential is one user's credential for one mechanism, as Kafka
// stores it (RFC 5802): the password itself is never kept, only what a
// server needs to check a client's proof and prove itself back.
type ScramCredential struct {
	Salt       []byte `json:"salt"`
	StoredKey  []byte `json:"stored_key"` // H(HMAC(SaltedPassword, "Client Key"))
	ServerKey  []byte `json:"server_key"` // HMAC(SaltedPassword, "Server Key")
	Iterations int32  `json:"iterations"`
}

// ScramSaltedPassword computes RFC 5802's SaltedPassword, Hi(password,
// salt, iterations): PBKDF2 with the mechanism's HMAC.
func ScramSaltedPassword(m ScramMechanism, password string, salt []byte, iterations int) ([]byte, error) {
	h := m.Hash()
	if h == nil {
		return nil, fmt.Errorf("metadata: salted password: unknown mechanism %s", m)
	}
	key, err := pbkdf2.Key(h, password, salt, iterations, h().Size())
	if err != nil {
		return nil, fmt.Errorf("metadata: salted password for %s: %w", m, err)
	}
	return key, nil
}

// ScramCredentialFromSalted derives the stored credential from a salted
// password, as Kafka's controller does for an AlterUserScramCredentials
// upsertion (which carries the salt and salted password, never the
// password).
func ScramCredentialFromSalted(m ScramMechanism, salt, salted []byte, iterations int32) (ScramCredential, error) {
	h := m.Hash()
	if h == nil {
		return ScramCredential{}, fmt.Errorf("metadata: scram credential: unknown mechanism %s", m)
	}
	clientKey := scramHMAC(h, salted, "Client Key")
	stored := h()
	stored.Write(clientKey)
	return ScramCredential{
		Salt:       bytes.Clone(salt),
		StoredKey:  stored.Sum(nil),
		ServerKey:  scramHMAC(h, salted, "Server Key"),
		Iterations: iterations,
	}, nil
}

// ScramCredentialFromPassword derives a credential from a password with a
// fresh random salt (as long as the hash), as `kafka-configs
// --add-config 'SCRAM-SHA-256=[password=...]'` does.
func ScramCredentialFromPassword(m ScramMechanism, password string, iterations int) (ScramCredential, error) {
	h := m.Hash()
	if h == nil {
		return ScramCredential{}, fmt.Errorf("metadata: scram credential: unknown mechanism %s", m)
	}
	salt := make([]byte, h().Size())
	if _, err := rand.Read(salt); err != nil {
		return ScramCredential{}, fmt.Errorf("metadata: scram salt: %w", err)
	}
	salted, err := ScramSaltedPassword(m, password, salt, iterations)
	if err != nil {
		return ScramCredential{}, err
	}
	return ScramCredentialFromSalted(m, salt, salted, int32(iterations))
}

func scramHMAC(h func() hash.Hash, key []byte, msg string) []byte {
	mac := hmac.New(h, key)
	mac.Write([]byte(msg))
	return mac.Sum(nil)
}

// The Kafka error codes of KIP-554's per-user results.
const (
	ScramErrNone                 int16 = 0
	ScramErrUnsupportedMechanism int16 = 33 // UNSUPPORTED_SASL_MECHANISM
	ScramErrResourceNotFound     int16 = 91 // RESOURCE_NOT_FOUND
	ScramErrDuplicateResource    int16 = 92 // DUPLICATE_RESOURCE
	ScramErrUnacceptable         int16 = 93 // UNACCEPTABLE_CREDENTIAL
)

// ScramUpsertion sets one user's credential for one mechanism from a salt
// and salted password (AlterUserScramCredentials' upsertion).
type ScramUpsertion struct {
	User           string
	Mechanism      ScramMechanism
	Iterations     int32
	Salt           []byte
	SaltedPassword []byte
}

// ScramDeletion removes one user's credential for one mechanism.
type ScramDeletion struct {
	User      string
	Mechanism ScramMechanism
}

// ScramResult is the outcome for one user of an alter or describe request.
type ScramResult struct {
	User         string
	ErrorCode    int16
	ErrorMessage string
	// Credentials, for a describe, are the user's mechanisms and
	// iterations, by mechanism order.
	Credentials []ScramCredentialInfo
}

// ScramCredentialInfo is what a describe shows of a credential: never
// its keys or salt.
type ScramCredentialInfo struct {
	Mechanism  ScramMechanism
	Iterations int32
}

const scramPrefix = "scram/"

// scramKey is scram/<user>/<mechanism>; the user is path-escaped so that a
// '/' in a name cannot reach another user's keys.
func scramKey(user string, m ScramMechanism) string {
	return scramUserPrefix(user) + m.String()
}

func scramUserPrefix(user string) string { return scramPrefix + url.PathEscape(user) + "/" }

// ScramCredential returns a user's credential for a mechanism; ok is false
// when there is none.
func (s *Store) ScramCredential(ctx context.Context, user string, m ScramMechanism) (ScramCredential, bool, error) {
	var c ScramCredential
	_, ok, err := s.getJSON(ctx, scramKey(user, m), &c)
	if err != nil {
		return ScramCredential{}, false, fmt.Errorf("metadata: scram credential of %q: %w", user, err)
	}
	return c, ok, nil
}

// DescribeScramCredentials answers DescribeUserScramCredentials: for each
// user named, its mechanisms and iterations, RESOURCE_NOT_FOUND when it has
// none and DUPLICATE_RESOURCE when named twice. No users (nil) means every
// user with a credential, in name order.
func (s *Store) DescribeScramCredentials(ctx context.Context, users []string) ([]ScramResult, error) {
	if users == nil {
		return s.describeAllScram(ctx)
	}
	seen := make(map[string]int, len(users))
	for _, u := range users {
		seen[u]++
	}
	var out []ScramResult
	done := make(map[string]bool, len(users))
	for _, u := range users {
		if done[u] {
			continue
		}
		done[u] = true
		r := ScramResult{User: u}
		switch {
		case seen[u] > 1:
			r.ErrorCode, r.ErrorMessage = ScramErrDuplicateResource, "Cannot describe SCRAM credentials for the same user twice in a single request: "+u
		default:
			infos, err := s.scramInfos(ctx, u)
			if err != nil {
				return nil, err
			}
			if len(infos) == 0 {
				r.ErrorCode, r.ErrorMessage = ScramErrResourceNotFound, "Attempt to describe a user credential that does not exist: "+u
			}
			r.Credentials = infos
		}
		out = append(out, r)
	}
	return out, nil
}

func (s *Store) scramInfos(ctx context.Context, user string) ([]ScramCredentialInfo, error) {
	var infos []ScramCredentialInfo
	for _, m := range []ScramMechanism{ScramSHA256, ScramSHA512} {
		c, ok, err := s.ScramCredential(ctx, user, m)
		if err != nil {
			return nil, err
		}
		if ok {
			infos = append(infos, ScramCredentialInfo{Mechanism: m, Iterations: c.Iterations})
		}
	}
	return infos, nil
}

func (s *Store) describeAllScram(ctx context.Context) ([]ScramResult, error) {
	items, err := s.kv.Range(ctx, scramPrefix, PrefixEnd(scramPrefix), 0, false)
	if err != nil {
		return nil, fmt.Errorf("metadata: scram credentials: %w", err)
	}
	byUser := map[string][]ScramCredentialInfo{}
	for _, it := range items {
		rest := strings.TrimPrefix(it.Key, scramPrefix)
		i := strings.LastIndexByte(rest, '/')
		if i < 0 {
			return nil, fmt.Errorf("metadata: scram key %q: no mechanism", it.Key)
		}
		user, err := url.PathUnescape(rest[:i])
		if err != nil {
			return nil, fmt.Errorf("metadata: scram key %q: %w", it.Key, err)
		}
		var c ScramCredential
		if err := jsonDecode(it, &c); err != nil {
			return nil, err
		}
		byUser[user] = append(byUser[user], ScramCredentialInfo{Mechanism: ParseScramMechanism(rest[i+1:]), Iterations: c.Iterations})
	}
	out := make([]ScramResult, 0, len(byUser))
	for u, infos := range byUser {
		sort.Slice(infos, func(a, b int) bool { return infos[a].Mechanism < infos[b].Mechanism })
		out = append(out, ScramResult{User: u, Credentials: infos})
	}
	sort.Slice(out, func(a, b int) bool { return out[a].User < out[b].User })
	return out, nil
}

// AlterScramCredentials answers AlterUserScramCredentials as Kafka's
// ScramControlManager does: one result per user; a user named more than
// once in the request fails with DUPLICATE_RESOURCE, an empty name or too
// few or many iterations with UNACCEPTABLE_CREDENTIAL, an unknown
// mechanism with UNSUPPORTED_SASL_MECHANISM, and the deletion of a
// credential that does not exist with RESOURCE_NOT_FOUND. Each change is
// compare-and-swapped on the version it was checked at; they are written
// in one transaction when the backend's limits allow, else in runs that
// fit (each user's change is one write, so no user is ever half changed).
func (s *Store) AlterScramCredentials(ctx context.Context, deletions []ScramDeletion, upsertions []ScramUpsertion) ([]ScramResult, error) {
	order, results, pending, err := validateScramAlter(deletions, upsertions)
	if err != nil {
		return nil, err
	}
	for range maxCASRetries {
		if len(pending) == 0 {
			break
		}
		if pending, err = s.applyScramChanges(ctx, pending, results); err != nil {
			return nil, fmt.Errorf("metadata: alter scram credentials: %w", err)
		}
	}
	if len(pending) > 0 {
		return nil, fmt.Errorf("metadata: alter scram credentials: %w", ErrTooManyRetries)
	}
	out := make([]ScramResult, 0, len(order))
	for _, u := range order {
		out = append(out, results[u])
	}
	return out, nil
}

// scramChange is one valid change of an alter request: the credential to
// write, or nil to delete the key.
type scramChange struct {
	user string
	key  string
	cred *ScramCredential
}

// validateScramAlter checks a request without reading the store: the
// users in request order, the failures by user, and the valid changes.
func validateScramAlter(deletions []ScramDeletion, upsertions []ScramUpsertion) ([]string, map[string]ScramResult, []scramChange, error) {
	count := map[string]int{}
	var order []string
	note := func(user string) {
		if count[user] == 0 {
			order = append(order, user)
		}
		count[user]++
	}
	for _, d := range deletions {
		note(d.User)
	}
	for _, u := range upsertions {
		note(u.User)
	}
	results := make(map[string]ScramResult, len(order))
	fail := func(user string, code int16, msg string) {
		results[user] = ScramResult{User: user, ErrorCode: code, ErrorMessage: msg}
	}
	var changes []scramChange
	common := func(user string, m ScramMechanism) bool {
		switch {
		case count[user] > 1:
			fail(user, ScramErrDuplicateResource, "A user credential cannot be altered twice in the same request")
		case user == "":
			fail(user, ScramErrUnacceptable, "Username must not be empty")
		case !m.Valid():
			fail(user, ScramErrUnsupportedMechanism, "Unknown SCRAM mechanism")
		default:
			return true
		}
		return false
	}
	for _, d := range deletions {
		if common(d.User, d.Mechanism) {
			changes = append(changes, scramChange{user: d.User, key: scramKey(d.User, d.Mechanism)})
		}
	}
	for _, u := range upsertions {
		if !common(u.User, u.Mechanism) {
			continue
		}
		switch {
		case u.Iterations < ScramMinIterations:
			fail(u.User, ScramErrUnacceptable, "Too few iterations")
		case u.Iterations > ScramMaxIterations:
			fail(u.User, ScramErrUnacceptable, "Too many iterations")
		default:
			c, err := ScramCredentialFromSalted(u.Mechanism, u.Salt, u.SaltedPassword, u.Iterations)
			if err != nil {
				return nil, nil, nil, err
			}
			changes = append(changes, scramChange{user: u.User, key: scramKey(u.User, u.Mechanism), cred: &c})
		}
	}
	return order, results, changes, nil
}

// applyScramChanges reads each change's key, settles the deletions of
// missing credentials as RESOURCE_NOT_FOUND, writes the rest in runs that
// fit the backend, and returns the changes whose run lost a
// compare-and-swap, to be checked again.
func (s *Store) applyScramChanges(ctx context.Context, changes []scramChange, results map[string]ScramResult) ([]scramChange, error) {
	var live []scramChange
	var conds []Cond
	var ops []Op
	for _, c := range changes {
		it, ok, err := s.kv.Get(ctx, c.key)
		if err != nil {
			return nil, err
		}
		if c.cred == nil && !ok {
			results[c.user] = ScramResult{User: c.user, ErrorCode: ScramErrResourceNotFound, ErrorMessage: "Attempt to delete a user credential that does not exist"}
			continue
		}
		live = append(live, c)
		conds = append(conds, Cond{Key: c.key, Version: it.Version})
		if c.cred == nil {
			ops = append(ops, Delete(c.key))
		} else {
			ops = append(ops, putJSON(c.key, *c.cred))
		}
	}
	var retry []scramChange
	i := 0
	for _, run := range s.TxnLimits().chunks(ops) {
		n := len(run)
		_, err := s.kv.Txn(ctx, conds[i:i+n], run)
		switch {
		case err == nil:
			for _, c := range live[i : i+n] {
				results[c.user] = ScramResult{User: c.user}
			}
		case IsConflict(err):
			retry = append(retry, live[i:i+n]...)
		default:
			return nil, err
		}
		i += n
	}
	return retry, nil
}
