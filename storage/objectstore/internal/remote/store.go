package remote

import (
	"fmt"
	"strings"

	"github.com/sediment-io/sediment/storage/objectstore"
)

// Config says where a Store keeps its objects and how it talks to them.
type Config struct {
	// Name prefixes every error: the backend's package name ("s3").
	Name string
	// Bucket is only named in errors; the Wire knows it.
	Bucket string
	// Prefix, when not empty, is prepended to every key with a slash
	// ("PREFIX/key") and stripped from listed keys. It must itself be a
	// valid key.
	Prefix string
	Tuning Tuning
}

// Store is an objectstore.Store over a Wire. It is safe for concurrent use
// as long as the Wire is.
type Store struct {
	name   string
	bucket string
	prefix string // "" or Config.Prefix + "/"
	tuning Tuning
	wire   Wire
}

var _ objectstore.Store = (*Store)(nil)

// New returns a Store that sends its requests through wire.
func New(cfg Config, wire Wire) (*Store, error) {
	t := cfg.Tuning.withDefaults()
	if err := t.validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", cfg.Name, err)
	}
	s := &Store{name: cfg.Name, bucket: cfg.Bucket, tuning: t, wire: wire}
	if cfg.Prefix != "" {
		if err := objectstore.ValidateKey(cfg.Prefix); err != nil {
			return nil, fmt.Errorf("%s: key prefix: %w", cfg.Name, err)
		}
		s.prefix = cfg.Prefix + "/"
	}
	return s, nil
}

// Close releases the connections.
func (s *Store) Close() error { return s.wire.Close() }

// full returns the stored key of key.
func (s *Store) full(key string) string { return s.prefix + key }

// where names key's place for errors: bucket/prefix/key.
func (s *Store) where(key string) string { return s.bucket + "/" + s.full(key) }

// checkKey validates key for op.
func (s *Store) checkKey(op, key string) error {
	if err := objectstore.ValidateKey(key); err != nil {
		return fmt.Errorf("%s: %s: %w", s.name, op, err)
	}
	return nil
}

// info turns what the Wire reported for a full key into the caller's view.
func (s *Store) info(in objectstore.Info) objectstore.Info {
	in.Key = strings.TrimPrefix(in.Key, s.prefix)
	in.ETag = quoteETag(in.ETag)
	return in
}

// quoteETag returns an ETag in the double quotes S3 sends it in; SDKs
// differ in whether they strip them.
func quoteETag(etag string) string {
	if etag == "" || strings.HasPrefix(etag, `"`) {
		return etag
	}
	return `"` + etag + `"`
}
