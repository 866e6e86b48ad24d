package catalog

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/apache/iceberg-go"
	icebergcatalog "github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/catalog/rest"
)

// restParams are the query parameters a rest+http(s) URL may carry.
var restParams = []string{"warehouse", "credential", "token"}

// openREST opens the Iceberg REST catalog at u (rest+http://HOST:PORT/PREFIX
// is the catalog's base URI http://HOST:PORT/PREFIX). warehouse= names the
// server's warehouse, credential= (CLIENT_ID:SECRET) gets an OAuth2 token
// from the server, token= is a bearer token. The warehouse's IO properties
// go along, so that data files can be written when the server vends no
// storage configuration of its own.
func openREST(ctx context.Context, u *url.URL, _ string, props iceberg.Properties) (icebergcatalog.Catalog, error) {
	raw := u.String()
	if u.Host == "" {
		return nil, badURL(raw, "no server: want %s://HOST:PORT/PREFIX", u.Scheme)
	}
	q := u.Query()
	for k, vs := range q {
		if !slices.Contains(restParams, k) {
			return nil, badURL(raw, "unknown parameter %s (known: %s)", k, strings.Join(restParams, ", "))
		}
		if len(vs) != 1 || vs[0] == "" {
			return nil, badURL(raw, "parameter %s wants exactly one non-empty value", k)
		}
	}
	opts := []rest.Option{rest.WithAdditionalProps(props)}
	if w := q.Get("warehouse"); w != "" {
		opts = append(opts, rest.WithWarehouseLocation(w))
	}
	if c := q.Get("credential"); c != "" {
		opts = append(opts, rest.WithCredential(c))
	}
	if tok := q.Get("token"); tok != "" {
		opts = append(opts, rest.WithOAuthToken(tok))
	}
	base := url.URL{Scheme: strings.TrimPrefix(u.Scheme, "rest+"), Host: u.Host, Path: u.Path}
	cat, err := rest.NewCatalog(ctx, catalogName, base.String(), opts...)
	if err != nil {
		return nil, fmt.Errorf("catalog: --table-catalog %s: %w", redact(raw), err)
	}
	return cat, nil
}
