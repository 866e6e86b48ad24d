package s3

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/sediment-io/sediment/storage/objectstore/internal/remote"
)

// Tuning holds multipart, retry and deadline settings; zero fields take
// their defaults (multipart above 64 MiB in 16 MiB parts, 5 attempts,
// backoff 100 ms to 5 s, 30 s per attempt plus 1 s per MiB of body).
type Tuning = remote.Tuning

// Options says which bucket to use and how to reach it.
type Options struct {
	Bucket string // required
	// Prefix, when not empty, is prepended to every key as "PREFIX/".
	Prefix string
	// Endpoint is the server's base URL (http://127.0.0.1:9000); empty
	// means AWS.
	Endpoint string
	// Region overrides AWS_REGION and the profile's region.
	Region string
	// PathStyle addresses the bucket in the path rather than the host name.
	PathStyle bool
	Tuning    Tuning
}

// Store is an S3 bucket (or a prefix of one) as an objectstore.Store.
type Store struct {
	*remote.Store
	client *awss3.Client
}

// Open returns a store for opts. It loads credentials but sends no
// request: a wrong bucket or credential shows at the first call.
func Open(ctx context.Context, opts Options) (*Store, error) {
	if opts.Bucket == "" {
		return nil, errors.New("s3: open: no bucket")
	}
	load := []func(*config.LoadOptions) error{
		config.WithRetryer(func() aws.Retryer { return aws.NopRetryer{} }),
	}
	if opts.Region != "" {
		load = append(load, config.WithRegion(opts.Region))
	}
	cfg, err := config.LoadDefaultConfig(ctx, load...)
	if err != nil {
		return nil, fmt.Errorf("s3: open bucket %s: load AWS config: %w", opts.Bucket, err)
	}
	if cfg.Region == "" {
		cfg.Region = "us-east-1"
	}
	httpClient := tunedClient(cfg.HTTPClient)
	client := awss3.NewFromConfig(cfg, func(o *awss3.Options) {
		o.HTTPClient = httpClient
		if opts.Endpoint != "" {
			o.BaseEndpoint = aws.String(opts.Endpoint)
		}
		o.UsePathStyle = opts.PathStyle
		o.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired
		o.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenRequired
	})
	w := &wire{client: client, bucket: opts.Bucket, http: httpClient}
	rs, err := remote.New(remote.Config{Name: "s3", Bucket: opts.Bucket, Prefix: opts.Prefix, Tuning: opts.Tuning}, w)
	if err != nil {
		return nil, err
	}
	return &Store{Store: rs, client: client}, nil
}

// tunedClient returns the HTTP client the SDK configured (with a custom CA
// bundle, if AWS_CA_BUNDLE names one), its transport set up for a store
// and frozen, so that the store owns its connection pool.
func tunedClient(c aws.HTTPClient) *http.Client {
	b, ok := c.(*awshttp.BuildableClient)
	if !ok {
		b = awshttp.NewBuildableClient()
	}
	return b.WithTransportOptions(remote.TuneTransport).Freeze().(*http.Client)
}

// Client returns the SDK client, for what the Store interface does not
// cover (tests list incomplete multipart uploads with it).
func (s *Store) Client() *awss3.Client { return s.client }
