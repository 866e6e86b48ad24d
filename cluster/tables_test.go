package cluster

import (
	"context"
	"testing"
	"time"

	"github.com/sediment-io/sediment/metadata"
	"github.com/sediment-io/sediment/metadata/etcdkv/etcdtest"
)

func tableName(id metadata.TopicID) string { return "table/" + id.String() }

func (f *fakeOwner) AcquireTable(_ context.Context, id metadata.TopicID) error {
	f.take(tableName(id))
	return nil
}

func (f *fakeOwner) ReleaseTable(_ context.Context, id metadata.TopicID) error {
	f.give(tableName(id), false)
	return nil
}

func (f *fakeOwner) DropTable(id metadata.TopicID) { f.give(tableName(id), true) }

// withTables makes a node's fake the table owner too; a topic is a table
// topic when its configs say so.
func withTables(more func(*Node)) func(*Node) {
	return func(n *Node) {
		n.cfg.Tables = n.cfg.Partitions.(*fakeOwner)
		n.cfg.IsTable = func(c map[string]string) bool { return c["sediment.table.enable"] == "true" }
		if more != nil {
			more(n)
		}
	}
}

func (c *testCluster) createTable(name string) metadata.Topic {
	topic := metadata.Topic{Name: name, ID: metadata.NewTopicID(), Partitions: 2,
		Configs: map[string]string{"sediment.table.enable": "true"}}
	if err := c.meta.CreateTopic(context.Background(), topic); err != nil {
		c.t.Fatal(err)
	}
	c.topics = append(c.topics, topic)
	return topic
}

// tablesConverged reports whether each of tables is converted by exactly
// one of nodes, which holds its fence, every node's view naming it, and
// whether no node holds the slot of a topic that is not a table.
func (c *testCluster) tablesConverged(tables []metadata.Topic, plain []metadata.Topic, nodes ...*testNode) bool {
	for _, t := range tables {
		if !c.oneOwner(nodes, tableName(t.ID), func(n *testNode) (bool, int32, bool) {
			_, ok := n.TableFence(t.ID)
			leader, lok := n.TableLeader(t.ID)
			return ok, leader, lok
		}) {
			return false
		}
	}
	for _, t := range plain {
		for _, n := range nodes {
			if _, ok := n.TableFence(t.ID); ok || n.owner.owns(tableName(t.ID)) {
				return false
			}
		}
	}
	return true
}

func tablesOf(n *testNode, tables []metadata.Topic) []metadata.Topic {
	var out []metadata.Topic
	for _, t := range tables {
		if n.owner.owns(tableName(t.ID)) {
			out = append(out, t)
		}
	}
	return out
}

// TestTableSlots: every table topic's converter runs on exactly one
// broker, the slots are spread over the brokers, a topic that is not a
// table gets none, a graceful close hands its tables over (released, never
// dropped, never two converters at once: the registry), and a table
// disabled by its configs is released.
func TestTableSlots(t *testing.T) {
	endpoint, _ := etcdtest.Start(t)
	c := newTestCluster(t, endpoint, "tables")
	var tables []metadata.Topic
	for _, name := range []string{"t1", "t2", "t3", "t4", "t5", "t6"} {
		tables = append(tables, c.createTable(name))
	}
	plain := []metadata.Topic{c.createTopic("plain", 2)}
	n1 := c.mustStart(1, "object", withTables(nil))
	n2 := c.mustStart(2, "object", withTables(nil))
	n3 := c.mustStart(3, "object", withTables(nil))
	waitFor(t, converge, "each table converted by one broker, spread over the three", func() bool {
		return c.tablesConverged(tables, plain, n1, n2, n3) &&
			len(tablesOf(n1, tables)) == 2 && len(tablesOf(n2, tables)) == 2 && len(tablesOf(n3, tables)) == 2
	})
	// The fence is the own key at its version.
	for _, n := range []*testNode{n1, n2, n3} {
		for _, tb := range tablesOf(n, tables) {
			f, ok := n.TableFence(tb.ID)
			it, found, err := c.kv.Get(context.Background(), TableOwnerKey(tb.ID))
			if !ok || err != nil || !found || it.Version != f.Version || f.Key != TableOwnerKey(tb.ID) {
				t.Fatalf("node %d's fence of %s: %+v ok=%v; key at %d found=%v err=%v", n.cfg.NodeID, tb.Name, f, ok, it.Version, found, err)
			}
		}
	}
	closeNode(t, n3.Node)
	if _, _, drops := n3.owner.counts(); drops != 0 || n3.owner.count() != 0 {
		t.Fatalf("node 3 closed gracefully: %d drops, %d still served", drops, n3.owner.count())
	}
	waitFor(t, converge, "the two others take node 3's tables", func() bool {
		return c.tablesConverged(tables, plain, n1, n2)
	})
	off := tables[0]
	off.Configs = map[string]string{"sediment.table.enable": "false"}
	if err := c.meta.UpdateTopic(context.Background(), c.topicAt(off.Name), off); err != nil {
		t.Fatal(err)
	}
	waitFor(t, converge, "a disabled table is released and its own key deleted", func() bool {
		_, found, err := c.kv.Get(context.Background(), TableOwnerKey(off.ID))
		return err == nil && !found && c.tablesConverged(tables[1:], []metadata.Topic{off}, n1, n2)
	})
}

// topicAt reads a topic as metadata holds it now.
func (c *testCluster) topicAt(name string) metadata.Topic {
	c.t.Helper()
	topics, err := c.meta.Topics(context.Background())
	if err != nil {
		c.t.Fatal(err)
	}
	for _, t := range topics {
		if t.Name == name {
			return t
		}
	}
	c.t.Fatalf("no topic %s", name)
	return metadata.Topic{}
}

// TestTableSlotZombie: a node whose keep-alives stop gives up its table
// slots at its local deadline (DropTable, no fence), before etcd expires
// its lease; another broker takes them, and the zombie's old fence no
// longer matches the own key.
func TestTableSlotZombie(t *testing.T) {
	endpoint, _ := etcdtest.Start(t)
	c := newTestCluster(t, endpoint, "tablezombie")
	var tables []metadata.Topic
	for _, name := range []string{"t1", "t2", "t3", "t4"} {
		tables = append(tables, c.createTable(name))
	}
	n1 := c.mustStart(1, "object", withTables(nil))
	z := c.mustStart(2, "object", withTables(func(n *Node) { n.marginFraction = 0.5 }))
	waitFor(t, converge, "both convert tables", func() bool {
		return c.tablesConverged(tables, nil, n1, z) && len(tablesOf(z, tables)) > 0
	})
	held := tablesOf(z, tables)
	fences := map[string]metadata.Cond{}
	for _, tb := range held {
		fences[tb.Name], _ = z.TableFence(tb.ID)
	}
	lost := z.Lost()
	z.keepAlivePaused.Store(true)
	select {
	case <-lost:
	case <-time.After(converge):
		t.Fatal("the session outlived its keep-alives")
	}
	for _, tb := range held {
		if _, ok := z.TableFence(tb.ID); ok {
			t.Fatalf("the zombie still holds the fence of %s past its deadline", tb.Name)
		}
	}
	waitFor(t, converge, "the zombie drops its tables", func() bool {
		_, _, drops := z.owner.counts()
		return drops >= len(held) && len(tablesOf(z, tables)) == 0
	})
	waitFor(t, converge, "the other node takes every table", func() bool { return c.tablesConverged(tables, nil, n1) })
	for name, f := range fences {
		it, found, err := c.kv.Get(context.Background(), f.Key)
		if err != nil || !found || it.Version == f.Version {
			t.Fatalf("%s's own key after the takeover: found=%v version %d (zombie's %d) err=%v", name, found, it.Version, f.Version, err)
		}
	}
	z.keepAlivePaused.Store(false)
	waitFor(t, converge, "the node rejoins and converts its share again", func() bool {
		return z.Valid() && c.tablesConverged(tables, nil, n1, z) && len(tablesOf(z, tables)) > 0
	})
}

// TestTableTarget: the table slots are placed over the table topics only,
// balanced, kept on their owners when a table is added, and not rewritten
// when nothing changed.
func TestTableTarget(t *testing.T) {
	n := &Node{cfg: Config{IsTable: func(c map[string]string) bool { return c["t"] == "1" }}}
	topic := func() metadata.Topic {
		return metadata.Topic{ID: metadata.NewTopicID(), Configs: map[string]string{"t": "1"}}
	}
	topics := []metadata.Topic{topic(), topic(), topic(), topic(), {ID: metadata.NewTopicID()}}
	live := []int32{1, 2}
	first := n.tableTarget(topics, placementRecord{}, live)
	if first == nil || len(first.Topics) != 4 || len(first.Owners) != 4 {
		t.Fatalf("first placement: %+v", first)
	}
	load := map[int32]int{}
	for _, o := range first.Owners {
		load[o]++
	}
	if load[1] != 2 || load[2] != 2 {
		t.Fatalf("unbalanced: %v", first.Owners)
	}
	if again := n.tableTarget(topics, *first, live); again != nil {
		t.Fatalf("rewritten without a change: %+v", again)
	}
	was := map[string]int32{}
	for i, id := range first.Topics {
		was[id] = first.Owners[i]
	}
	next := n.tableTarget(append(topics, topic()), *first, []int32{1, 2, 3})
	if next == nil || len(next.Topics) != 5 {
		t.Fatalf("after a table and a broker were added: %+v", next)
	}
	moved := 0
	for i, id := range next.Topics {
		if o, ok := was[id]; ok && o != next.Owners[i] {
			moved++
		}
	}
	if moved > 1 {
		t.Fatalf("%d tables moved, want at most the one the new broker takes: %v -> %v", moved, first, next)
	}
}

// TestAcquireTableKeySettles: a table slot's own key is written only when
// absent; a lost compare is settled by reading the key back: a key this
// session wrote already (an unknown outcome that applied) is its fence, a
// key another broker holds is ErrConflict, and a release at a stale fence
// deletes nothing.
func TestAcquireTableKeySettles(t *testing.T) {
	endpoint, _ := etcdtest.Start(t)
	c := newTestCluster(t, endpoint, "tablekey")
	n := c.mustStart(1, "object", withTables(nil))
	cli := c.kv.Client()
	ctx := context.Background()
	grant := func() *session {
		l, err := cli.Grant(ctx, 60)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cli.Revoke(context.Background(), l.ID) })
		return &session{lease: l.ID, ctx: ctx}
	}
	mine, other := grant(), grant()
	id := metadata.NewTopicID()
	fence, err := n.acquireTableKey(mine, id)
	if err != nil {
		t.Fatal(err)
	}
	again, err := n.acquireTableKey(mine, id)
	if err != nil || again != fence {
		t.Fatalf("acquiring again in the same session: %+v %v, want the fence %+v read back", again, err, fence)
	}
	if _, err := n.acquireTableKey(other, id); !metadata.IsConflict(err) {
		t.Fatalf("another session acquiring a held slot: %v, want a conflict", err)
	}
	stale := fence
	stale.Version--
	if err := n.releaseTableKey(ctx, stale); !metadata.IsConflict(err) {
		t.Fatalf("release at a stale fence: %v, want a conflict", err)
	}
	if err := n.releaseTableKey(ctx, fence); err != nil {
		t.Fatal(err)
	}
	if _, found, _ := c.kv.Get(ctx, TableOwnerKey(id)); found {
		t.Fatal("released, the key is still there")
	}
	if _, err := n.acquireTableKey(other, id); err != nil {
		t.Fatalf("acquiring a released slot: %v", err)
	}
}
