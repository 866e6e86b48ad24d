package metadata

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
)

// maxCASRetries bounds every read-modify-write loop in this package.
const maxCASRetries = 32

// Store is the typed metadata layer over a KV backend.
type Store struct {
	kv        KV
	commits   commitCache
	manifests manifestReader
}

// NewStore returns the typed layer over kv.
func NewStore(kv KV) *Store { return &Store{kv: kv} }

// Close closes the underlying KV.
func (s *Store) Close() error { return s.kv.Close() }

func (s *Store) getJSON(ctx context.Context, key string, v any) (version int64, ok bool, err error) {
	it, ok, err := s.kv.Get(ctx, key)
	if err != nil || !ok {
		return 0, ok, err
	}
	if err := json.Unmarshal(it.Value, v); err != nil {
		return 0, false, fmt.Errorf("metadata: decode %s: %w", key, err)
	}
	return it.Version, true, nil
}

func putJSON(key string, v any) Op {
	b, err := json.Marshal(v)
	if err != nil {
		// Only plain structs and maps are stored; this cannot fail.
		panic(fmt.Sprintf("metadata: encode %s: %v", key, err))
	}
	return Put(key, b)
}

// BrokerConfig returns the dynamic broker configs and their version (0 when
// none were ever set).
func (s *Store) BrokerConfig(ctx context.Context) (map[string]string, int64, error) {
	cfg := map[string]string{}
	v, _, err := s.getJSON(ctx, brokerConfigKey, &cfg)
	return cfg, v, err
}

// SetBrokerConfig replaces the dynamic broker configs if they are still at
// version (0: never set); else ErrConflict.
func (s *Store) SetBrokerConfig(ctx context.Context, cfg map[string]string, version int64) error {
	_, err := s.kv.Txn(ctx, []Cond{{Key: brokerConfigKey, Version: version}}, []Op{putJSON(brokerConfigKey, cfg)})
	return err
}

// AllocateProducerIDs reserves n consecutive producer ids and returns the
// first.
func (s *Store) AllocateProducerIDs(ctx context.Context, n int64) (int64, error) {
	for range maxCASRetries {
		var next int64
		v, _, err := s.getJSON(ctx, producerIDKey, &next)
		if err != nil {
			return 0, err
		}
		_, err = s.kv.Txn(ctx, []Cond{{Key: producerIDKey, Version: v}}, []Op{putJSON(producerIDKey, next+n)})
		if err == nil {
			return next, nil
		}
		if !IsConflict(err) {
			return 0, err
		}
	}
	return 0, fmt.Errorf("metadata: allocate producer ids: %w", ErrTooManyRetries)
}

const clusterIDKey = "cluster/id"

// ClusterID returns the cluster's id, creating it on first use: 22
// characters of URL-safe base64 over a random UUID, as Kafka's are.
func (s *Store) ClusterID(ctx context.Context) (string, error) {
	for range maxCASRetries {
		it, ok, err := s.kv.Get(ctx, clusterIDKey)
		if err != nil {
			return "", err
		}
		if ok {
			return string(it.Value), nil
		}
		id := NewTopicID()
		b64 := base64.RawURLEncoding.EncodeToString(id[:])
		_, err = s.kv.Txn(ctx, []Cond{{Key: clusterIDKey, Version: 0}}, []Op{Put(clusterIDKey, []byte(b64))})
		if err == nil {
			return b64, nil
		}
		if !IsConflict(err) {
			return "", err
		}
	}
	return "", fmt.Errorf("metadata: cluster id: %w", ErrTooManyRetries)
}
