package etcdkv_test

import (
	"context"
	"log/slog"
	"net"
	"reflect"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/sediment-io/sediment/metadata"
	"github.com/sediment-io/sediment/metadata/etcdkv"
	"github.com/sediment-io/sediment/metadata/etcdkv/etcdtest"
)

func TestParseURL(t *testing.T) {
	for _, tc := range []struct {
		url  string
		want etcdkv.Config
		err  string
	}{
		{url: "etcd://127.0.0.1:2379/sediment", want: etcdkv.Config{Endpoints: []string{"127.0.0.1:2379"}, Prefix: "sediment/"}},
		{url: "etcd://a:1,b:2,[::1]:3/x/y/", want: etcdkv.Config{Endpoints: []string{"a:1", "b:2", "[::1]:3"}, Prefix: "x/y/"}},
		{url: "etcd://h:2379/p?cacert=ca.pem&cert=c.pem&key=k.pem",
			want: etcdkv.Config{Endpoints: []string{"h:2379"}, Prefix: "p/", CACert: "ca.pem", Cert: "c.pem", Key: "k.pem"}},
		{url: "http://h:2379/p", err: "want etcd://"},
		{url: "etcd://h:2379", err: "needs a key prefix"},
		{url: "etcd://h:2379/", err: "needs a key prefix"},
		{url: "etcd://h/p", err: `endpoint "h"`},
		{url: "etcd://h:0/p", err: `endpoint "h:0"`},
		{url: "etcd://h:1,/p", err: `endpoint ""`},
		{url: "etcd://h:1/p?user=x", err: `unknown parameter "user"`},
		{url: "etcd://h:1/p?cert=c.pem", err: "cert and key go together"},
	} {
		got, err := etcdkv.ParseURL(tc.url)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: err=%v, want %q", tc.url, err, tc.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %+v err=%v, want %+v", tc.url, got, err, tc.want)
		}
	}
}

// TestOpenUnreachable: Open keeps trying an etcd that does not answer,
// and gives up with an error naming it when its context ends.
func TestOpenUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	cfg, err := etcdkv.ParseURL("etcd://" + addr + "/p")
	if err != nil {
		t.Fatal(err)
	}
	logger := slog.New(slog.DiscardHandler)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if _, err := etcdkv.Open(ctx, cfg, logger); err == nil || !strings.Contains(err.Error(), "unreachable") {
		t.Fatalf("open: err=%v, want unreachable", err)
	}
}

// TestEtcdTLS: the cacert, cert and key of the URL reach an etcd that
// serves TLS and requires client certificates; without them it is refused.
func TestEtcdTLS(t *testing.T) {
	endpoint, files, _ := etcdtest.StartTLS(t)
	cfg, err := etcdkv.ParseURL("etcd://" + endpoint + "/tls?cacert=" + files.CACert + "&cert=" + files.Cert + "&key=" + files.Key)
	if err != nil {
		t.Fatal(err)
	}
	kv, err := etcdkv.Open(context.Background(), cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer kv.Close()
	if _, err := kv.Txn(context.Background(), nil, []metadata.Op{metadata.Put("k", []byte("v"))}); err != nil {
		t.Fatal(err)
	}
	plain, _ := etcdkv.ParseURL("etcd://" + endpoint + "/tls")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if _, err := etcdkv.Open(ctx, plain, slog.New(slog.DiscardHandler)); err == nil {
		t.Fatal("a client without TLS reached an etcd that requires it")
	}
}

// TestEtcdAuth: with etcd auth on, Open succeeds with the right
// credentials and gives up at once, saying etcd refused, with wrong ones.
func TestEtcdAuth(t *testing.T) {
	endpoint, _ := etcdtest.Start(t)
	admin, err := clientv3.New(clientv3.Config{Endpoints: []string{endpoint}, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for _, step := range []func() error{
		func() error { _, err := admin.UserAdd(ctx, "root", "secret"); return err },
		func() error { _, err := admin.UserGrantRole(ctx, "root", "root"); return err },
		func() error { _, err := admin.AuthEnable(ctx); return err },
	} {
		if err := step(); err != nil {
			t.Fatal(err)
		}
	}
	cfg, _ := etcdkv.ParseURL("etcd://" + endpoint + "/auth")
	cfg.Username, cfg.Password = "root", "secret"
	kv, err := etcdkv.Open(ctx, cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer kv.Close()
	if _, err := kv.Txn(ctx, nil, []metadata.Op{metadata.Put("k", []byte("v"))}); err != nil {
		t.Fatal(err)
	}
	cfg.Password = "wrong"
	if _, err := etcdkv.Open(ctx, cfg, slog.New(slog.DiscardHandler)); err == nil || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("wrong password: err=%v, want etcd's refusal", err)
	}
}
