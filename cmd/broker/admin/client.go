package admin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// invocation is one run of a command: its output streams, the common
// flags, and the client, connected on first use.
type invocation struct {
	stdout, stderr io.Writer
	common         commonFlags

	ctx    context.Context
	cancel context.CancelFunc
	cl     *kgo.Client
	adm    *kadm.Client
}

func newInvocation(common commonFlags, stdout, stderr io.Writer) *invocation {
	ctx, cancel := context.WithTimeout(context.Background(), common.timeout)
	return &invocation{stdout: stdout, stderr: stderr, common: common, ctx: ctx, cancel: cancel}
}

// admin returns the admin client, creating it on first use. A bootstrap
// list the client rejects is bad usage.
func (inv *invocation) admin() (*kadm.Client, error) {
	if inv.adm != nil {
		return inv.adm, nil
	}
	var seeds []string
	for _, s := range strings.Split(inv.common.bootstrap, ",") {
		if s = strings.TrimSpace(s); s != "" {
			seeds = append(seeds, s)
		}
	}
	if len(seeds) == 0 {
		return nil, usagef("--bootstrap-server %q: want HOST:PORT[,HOST:PORT...]", inv.common.bootstrap)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.ClientID("sediment-admin"),
		kgo.DialTimeout(inv.common.timeout), kgo.RetryTimeout(inv.common.timeout))
	if err != nil {
		return nil, usagef("--bootstrap-server %q: %v", inv.common.bootstrap, err)
	}
	inv.cl = cl
	inv.adm = kadm.NewClient(cl)
	inv.adm.SetTimeoutMillis(int32(min(inv.common.timeout.Milliseconds(), 1<<31-1)))
	return inv.adm, nil
}

// close releases the client and the deadline.
func (inv *invocation) close() {
	if inv.cl != nil {
		inv.cl.Close()
	}
	inv.cancel()
}

// failed wraps a request error with what was being done; a deadline names
// the cluster and the --timeout it did not answer within.
func (inv *invocation) failed(what string, err error) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%s: no answer from %s within --timeout %s: %w", what, inv.common.bootstrap, inv.common.timeout, err)
	}
	return fmt.Errorf("%s: %w", what, err)
}
