package etcdkv

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
)

// Config says where the etcd cluster is and how to reach it.
type Config struct {
	Endpoints []string // HOST:PORT each
	Prefix    string   // every key lives under it; ends in "/"
	// CACert, Cert and Key are PEM file paths: CACert verifies the
	// servers, Cert and Key are the client's certificate for mutual TLS.
	// TLS is on when any is set.
	CACert, Cert, Key  string
	Username, Password string // etcd auth; none when Username is empty
	Limits             Limits // zero: DefaultLimits
}

// ParseURL parses etcd://HOST:PORT[,HOST:PORT]/PREFIX[?cacert=F&cert=F&key=F].
// The credentials of etcd auth come from elsewhere (ETCD_USERNAME and
// ETCD_PASSWORD in the broker) so that they never show in a URL that is
// logged.
func ParseURL(s string) (Config, error) {
	rest, ok := strings.CutPrefix(s, "etcd://")
	if !ok {
		return Config{}, fmt.Errorf("etcdkv: %q: want etcd://HOST:PORT[,HOST:PORT]/PREFIX", s)
	}
	rest, query, _ := strings.Cut(rest, "?")
	hosts, prefix, _ := strings.Cut(rest, "/")
	var cfg Config
	for _, h := range strings.Split(hosts, ",") {
		if err := checkHostPort(h); err != nil {
			return Config{}, fmt.Errorf("etcdkv: %q: %w", s, err)
		}
		cfg.Endpoints = append(cfg.Endpoints, h)
	}
	prefix = strings.Trim(prefix, "/")
	if prefix == "" {
		return Config{}, fmt.Errorf("etcdkv: %q: needs a key prefix after the hosts, e.g. etcd://127.0.0.1:2379/sediment", s)
	}
	cfg.Prefix = prefix + "/"
	if err := cfg.parseQuery(query); err != nil {
		return Config{}, fmt.Errorf("etcdkv: %q: %w", s, err)
	}
	return cfg, nil
}

func checkHostPort(h string) error {
	host, port, err := net.SplitHostPort(h)
	if err != nil {
		return fmt.Errorf("endpoint %q: want HOST:PORT", h)
	}
	if n, err := strconv.Atoi(port); err != nil || n <= 0 || n > 65535 || host == "" {
		return fmt.Errorf("endpoint %q: want HOST:PORT", h)
	}
	return nil
}

func (c *Config) parseQuery(query string) error {
	q, err := url.ParseQuery(query)
	if err != nil {
		return err
	}
	for name, vals := range q {
		switch name {
		case "cacert":
			c.CACert = vals[0]
		case "cert":
			c.Cert = vals[0]
		case "key":
			c.Key = vals[0]
		default:
			return fmt.Errorf("unknown parameter %q (known: cacert, cert, key)", name)
		}
	}
	if (c.Cert == "") != (c.Key == "") {
		return errors.New("cert and key go together")
	}
	return nil
}
