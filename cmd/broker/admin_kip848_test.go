package main

// KIP-848 consumer groups (franz-go with ServerSideBalancer) on kfake:
// Sediment serves only the classic protocol, so this runs on kfake alone.
// groups list types them, describe takes their members, assignments and
// generation (the group epoch) from ConsumerGroupDescribe, and
// reset-offsets --execute is refused while a member is live, then works.

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

func TestAdminKIP848Groups(t *testing.T) {
	fake, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatalf("start kfake: %v", err)
	}
	t.Cleanup(fake.Close)
	c := &adminCluster{name: "kfake", addr: fake.ListenAddrs()[0], tokens: map[string]string{}}
	c.must(t, "topics", "create", "--topic", "t", "--partitions", "2")
	produceTo(t, c.addr, "t", 0, 3, time.Time{})
	produceTo(t, c.addr, "t", 1, 4, time.Time{})
	m := startActiveMember(t, c.addr, "ng", "t", "ng-consumer", 7, kgo.ServerSideBalancer())

	if out := c.must(t, "groups", "list"); !regexpMatch(`(?m)^ng +consumer +Stable `, out) {
		t.Errorf("groups list does not type ng as a consumer group:\n%s", out)
	}
	var d []struct {
		Members []struct {
			MemberID   string `json:"member_id"`
			ClientID   string `json:"client_id"`
			Assignment []struct {
				Topic      string  `json:"topic"`
				Partitions []int32 `json:"partitions"`
			} `json:"assignment"`
		} `json:"members"`
		Offsets []struct {
			ConsumerID string `json:"consumer_id"`
			Lag        *int64 `json:"lag"`
		} `json:"offsets"`
		State struct {
			Type       string `json:"type"`
			Generation *int32 `json:"generation"`
			Members    int    `json:"members"`
		} `json:"state"`
	}
	out := c.must(t, "groups", "describe", "--group", "ng", "--members", "--state", "--offsets", "--output", "json")
	if err := json.Unmarshal([]byte(out), &d); err != nil || len(d) != 1 {
		t.Fatalf("describe json: %v\n%s", err, out)
	}
	g := d[0]
	if len(g.Members) != 1 || g.Members[0].MemberID != m.id || g.Members[0].ClientID != "ng-consumer" ||
		len(g.Members[0].Assignment) != 1 || g.Members[0].Assignment[0].Topic != "t" || !reflect.DeepEqual(g.Members[0].Assignment[0].Partitions, []int32{0, 1}) {
		t.Errorf("members %+v; want %s (ng-consumer) owning t:0,1", g.Members, m.id)
	}
	if g.State.Type != "consumer" || g.State.Generation == nil || *g.State.Generation < 1 || g.State.Members != 1 {
		t.Errorf("state %+v; want type consumer, a generation, 1 member", g.State)
	}
	if len(g.Offsets) != 2 || g.Offsets[0].ConsumerID != m.id || g.Offsets[0].Lag == nil || *g.Offsets[0].Lag != 0 {
		t.Errorf("offsets %+v; want 2 partitions consumed by %s with lag 0", g.Offsets, m.id)
	}

	r := c.cli(t, "groups", "reset-offsets", "--group", "ng", "--topic", "t", "--to-earliest", "--execute")
	if r.code != 1 || !strings.Contains(r.stderr, "1 active member(s)") {
		t.Errorf("reset --execute of a live KIP-848 group: exit %d, stderr %q", r.code, r.stderr)
	}
	adm := kadmFor(t, c.addr)
	if got := committed(t, adm, "ng"); !reflect.DeepEqual(got, map[string]int64{"t/0": 3, "t/1": 4}) {
		t.Errorf("offsets after the refused reset: %v", got)
	}
	m.close()
	waitFor(t, "group ng to be empty", func() bool {
		return regexpMatch(`(?m)^ng +consumer +Empty `, c.must(t, "groups", "list"))
	})
	c.must(t, "groups", "reset-offsets", "--group", "ng", "--topic", "t", "--to-earliest", "--execute")
	if got := committed(t, adm, "ng"); !reflect.DeepEqual(got, map[string]int64{"t/0": 0, "t/1": 0}) {
		t.Errorf("offsets after reset of the empty group: %v, want 0 and 0", got)
	}
}
