package storeurl

import (
	"fmt"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/sediment-io/sediment/storage/objectstore"
	"github.com/sediment-io/sediment/storage/objectstore/internal/remote"
)

// spec is a parsed --object-store URL.
type spec struct {
	scheme    string // file, s3 or minio
	dir       string // file
	bucket    string
	prefix    string
	endpoint  string // s3: base URL; minio: HOST:PORT
	region    string
	pathStyle bool // s3
	secure    bool // minio
	tuning    remote.Tuning
}

const accepted = "want file://DIR, s3://BUCKET/PREFIX?endpoint=http://HOST:PORT&region=REGION&path_style=true " +
	"or minio://HOST:PORT/BUCKET/PREFIX?secure=false"

func parse(raw string) (*spec, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("%q: %v (%s)", raw, err, accepted)
	}
	var sp *spec
	switch u.Scheme {
	case "file":
		sp, err = parseFile(u)
	case "s3":
		sp, err = parseS3(u)
	case "minio":
		sp, err = parseMinio(u)
	default:
		err = fmt.Errorf("unsupported scheme %q", u.Scheme)
	}
	if err != nil {
		return nil, fmt.Errorf("%q: %v (%s)", raw, err, accepted)
	}
	return sp, nil
}

func parseFile(u *url.URL) (*spec, error) {
	dir := filePath(u)
	if dir == "" {
		return nil, fmt.Errorf("no directory")
	}
	if len(u.Query()) > 0 {
		return nil, fmt.Errorf("file:// takes no parameters")
	}
	return &spec{scheme: "file", dir: dir}, nil
}

// filePath is the directory of a file:// URL; relative paths (file://data)
// are kept relative.
func filePath(u *url.URL) string {
	if u.Host+u.Path == "" {
		return ""
	}
	return filepath.Clean(u.Host + u.Path)
}

func parseS3(u *url.URL) (*spec, error) {
	sp := &spec{scheme: "s3"}
	if err := bucketAndPrefix(sp, u.Host, u.Path); err != nil {
		return nil, err
	}
	q, err := newParams(u.Query())
	if err != nil {
		return nil, err
	}
	sp.endpoint = q.str("endpoint")
	sp.region = q.str("region")
	sp.pathStyle = q.bool("path_style", false)
	q.tuning(&sp.tuning)
	if err := q.done(); err != nil {
		return nil, err
	}
	if sp.endpoint != "" {
		if e, err := url.Parse(sp.endpoint); err != nil || (e.Scheme != "http" && e.Scheme != "https") || e.Host == "" {
			return nil, fmt.Errorf("endpoint %q: want http://HOST:PORT or https://HOST", sp.endpoint)
		}
	}
	return sp, nil
}

func parseMinio(u *url.URL) (*spec, error) {
	if u.Host == "" {
		return nil, fmt.Errorf("no server: want minio://HOST:PORT/BUCKET")
	}
	bucket, prefix, _ := strings.Cut(strings.TrimPrefix(u.Path, "/"), "/")
	sp := &spec{scheme: "minio", endpoint: u.Host}
	if err := bucketAndPrefix(sp, bucket, prefix); err != nil {
		return nil, err
	}
	q, err := newParams(u.Query())
	if err != nil {
		return nil, err
	}
	sp.secure = q.bool("secure", true)
	sp.region = q.str("region")
	q.tuning(&sp.tuning)
	return sp, q.done()
}

// bucketRE is S3's rule for bucket names: 3 to 63 lower-case letters,
// digits, dots and hyphens, starting and ending with a letter or digit.
var bucketRE = regexp.MustCompile(`^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$`)

// bucketAndPrefix checks and sets the bucket and the key prefix (a path,
// its slashes at either end dropped).
func bucketAndPrefix(sp *spec, bucket, path string) error {
	if bucket == "" {
		return fmt.Errorf("no bucket")
	}
	if !bucketRE.MatchString(bucket) {
		return fmt.Errorf("bucket %q: want 3-63 lower-case letters, digits, dots and hyphens", bucket)
	}
	sp.bucket = bucket
	sp.prefix = strings.Trim(path, "/")
	if sp.prefix != "" {
		if err := objectstore.ValidateKey(sp.prefix); err != nil {
			return fmt.Errorf("key prefix %q: %v", sp.prefix, err)
		}
	}
	return nil
}
