package main

import (
	"context"
	"slices"
	"strconv"
	"time"

	"github.com/sediment-io/sediment/metadata"
	"github.com/sediment-io/sediment/table"
)

// In a cluster only the broker converting a table knows its status (its
// lag, its last error), so every other broker asked for it asks that one,
// found by the table slot's own key, and relays the answer: any broker
// gives the same status, with the entry converterStatusName naming the
// broker that converts the table.

// converterStatusName is the entry naming the broker that converts a
// table topic (its node id; "none" while no broker holds the slot).
const converterStatusName = table.StatusPrefix + "converter"

// localTableStatusName, among the config names of a DescribeConfigs,
// asks a broker for the status as it sees it itself, never asking the
// converting broker: what one broker asks another, so that two brokers
// whose views of the slot differ for a moment never ask each other in a
// loop.
const localTableStatusName = table.StatusPrefix + "local"

// tableStatusTimeout bounds asking the converting broker.
const tableStatusTimeout = 5 * time.Second

// tableCluster is the cluster as the table status sees it.
type tableCluster struct {
	self  int32
	node  *lateNode
	peers *tablePeers
}

// clusterStatus answers for topic id's table in a cluster: this broker's
// own status when it converts the table (or is asked for its own), the
// converting broker's otherwise.
func (t *tableConverter) clusterStatus(topic string, id metadata.TopicID, names []string) [][2]string {
	c := t.cluster
	holder := c.holder(id)
	switch {
	case slices.Contains(names, localTableStatusName) || holder == c.self:
		return t.ownStatus(topic, holder)
	case holder < 0:
		return [][2]string{{table.StatusPrefix + "state", "waiting for a broker to take the table's slot"}, {converterStatusName, "none"}}
	}
	ctx, cancel := context.WithTimeout(context.Background(), tableStatusTimeout)
	defer cancel()
	entries, err := c.peers.tableStatus(ctx, holder, topic, append(slices.Clone(table.StatusNames), converterStatusName))
	if err != nil {
		return [][2]string{{table.StatusPrefix + "state", "converted by node " + strconv.Itoa(int(holder)) + ", which did not answer: " + err.Error()},
			{converterStatusName, strconv.Itoa(int(holder))}}
	}
	return entries
}

// holder is the broker converting table topic id: this one while it holds
// the slot, else the one the slot's own key names; -1 when none does.
func (c *tableCluster) holder(id metadata.TopicID) int32 {
	if _, ok := c.node.TableFence(id); ok {
		return c.self
	}
	if n := c.node.n.Load(); n != nil {
		if node, ok := n.TableLeader(id); ok {
			return node
		}
	}
	return -1
}

// ownStatus is this broker's status of topic's table and the converter
// entry naming holder; "starting" until the converter has seen the table
// (its slot was just acquired).
func (t *tableConverter) ownStatus(topic string, holder int32) [][2]string {
	entries := t.localStatus(topic)
	if len(entries) == 0 {
		entries = [][2]string{{table.StatusPrefix + "state", "starting"}}
	}
	v := "none"
	if holder >= 0 {
		v = strconv.Itoa(int(holder))
	}
	return append(entries, [2]string{converterStatusName, v})
}
