//go:build interop

package jvm

import (
	"context"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestInteropStartKafka: the reference broker starts from the pinned
// classpath and answers Metadata.
func TestInteropStartKafka(t *testing.T) {
	cp, err := Classpath()
	if err != nil {
		t.Fatal(err)
	}
	k, err := StartKafka(context.Background(), cp, KafkaOptions{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	cl, err := kgo.NewClient(kgo.SeedBrokers(k.Addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	brokers, err := kadm.NewClient(cl).ListBrokers(context.Background())
	if err != nil || len(brokers) != 1 {
		t.Fatalf("brokers %v err %v", brokers, err)
	}
}
