package main

import (
	"errors"
	"testing"

	"github.com/sediment-io/sediment/metadata"
)

// TestTableStatusClusterAnswersWithoutAsking: a cluster broker asked for
// its own view of a table's status (what one broker asks another) answers
// it without asking any broker, so two brokers never ask each other in a
// loop; asked while no broker holds the table's slot, it says so, also
// without asking.
func TestTableStatusClusterAnswersWithoutAsking(t *testing.T) {
	asked := false
	tc := &tableConverter{waitErr: errors.New("catalog down"),
		tableID: func(name string) (metadata.TopicID, bool) { return metadata.TopicID{1}, name == "clicks" },
		cluster: &tableCluster{self: 1, node: &lateNode{}, peers: newTablePeers(func() []string {
			asked = true
			return nil
		}, "test")}}
	own := statusMap(tc.statusEntries("clicks", []string{localTableStatusName}))
	if own["sediment.table.status.state"] != "waiting for the table catalog: catalog down" || own[converterStatusName] != "none" {
		t.Errorf("own status %v: want the local state and no converter", own)
	}
	none := statusMap(tc.statusEntries("clicks", nil))
	if none["sediment.table.status.state"] != "waiting for a broker to take the table's slot" || none[converterStatusName] != "none" {
		t.Errorf("status without a slot holder %v", none)
	}
	if other := tc.statusEntries("orders", nil); other != nil {
		t.Errorf("status of a topic that is no table: %v", other)
	}
	if asked {
		t.Error("another broker was asked")
	}
}

func statusMap(entries [][2]string) map[string]string {
	m := map[string]string{}
	for _, e := range entries {
		m[e[0]] = e[1]
	}
	return m
}
