package minio

import (
	"errors"
	"fmt"
	"os"

	miniogo "github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/sediment-io/sediment/storage/objectstore/internal/remote"
)

// Tuning holds multipart, retry and deadline settings; zero fields take
// their defaults (multipart above 64 MiB in 16 MiB parts, 5 attempts,
// backoff 100 ms to 5 s, 30 s per attempt plus 1 s per MiB of body).
type Tuning = remote.Tuning

// Options says which bucket to use and how to reach it.
type Options struct {
	// Endpoint is the server's HOST:PORT.
	Endpoint string
	// Secure selects https.
	Secure bool
	Bucket string // required
	// Prefix, when not empty, is prepended to every key as "PREFIX/".
	Prefix string
	// Region overrides AWS_REGION.
	Region string
	Tuning Tuning
}

// Store is a MinIO bucket (or a prefix of one) as an objectstore.Store.
type Store struct {
	*remote.Store
	client *miniogo.Client
}

// Open returns a store for opts. It sends no request: a wrong bucket or
// credential shows at the first call.
func Open(opts Options) (*Store, error) {
	if opts.Endpoint == "" || opts.Bucket == "" {
		return nil, errors.New("minio: open: want an endpoint and a bucket")
	}
	region := opts.Region
	if region == "" {
		region = os.Getenv("AWS_REGION")
	}
	if region == "" {
		region = "us-east-1"
	}
	transport := remote.NewTransport()
	client, err := miniogo.New(opts.Endpoint, &miniogo.Options{
		Creds:      credentialChain(),
		Secure:     opts.Secure,
		Region:     region,
		Transport:  transport,
		MaxRetries: 1,
	})
	if err != nil {
		return nil, fmt.Errorf("minio: open %s: %w", opts.Endpoint, err)
	}
	w := &wire{core: miniogo.Core{Client: client}, bucket: opts.Bucket, transport: transport}
	rs, err := remote.New(remote.Config{Name: "minio", Bucket: opts.Bucket, Prefix: opts.Prefix, Tuning: opts.Tuning}, w)
	if err != nil {
		return nil, err
	}
	return &Store{Store: rs, client: client}, nil
}

// credentialChain is the AWS variables, MinIO's, then the AWS shared
// credentials file (AWS_PROFILE).
func credentialChain() *credentials.Credentials {
	return credentials.NewChainCredentials([]credentials.Provider{
		&credentials.EnvAWS{},
		&credentials.EnvMinio{},
		&credentials.FileAWSCredentials{},
	})
}

// Client returns the minio-go client, for what the Store interface does
// not cover.
func (s *Store) Client() *miniogo.Client { return s.client }
