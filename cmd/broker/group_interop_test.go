//go:build interop

package main

// Consumer groups of the Debian-packaged Python clients (`make interop`):
// kafka-python (JoinGroup v2, OffsetCommit v2, OffsetFetch v1,
// FindCoordinator v0: the old versions it speaks) and
// confluent-kafka-python. One consumer reads part of a topic, commits and
// closes; the next of the group reads the rest: every record exactly once.

import (
	"encoding/json"
	"fmt"
	"testing"
)

// pythonGroupConsumers are scripts taking addr, topic, group and a count:
// they read that many records as a member of the group, commit, close and
// print [[partition, offset], ...].
var pythonGroupConsumers = map[string]struct{ module, pkg, script string }{
	"kafka-python": {"kafka", "python3-kafka", `
import sys, json
from kafka import KafkaConsumer
addr, topic, group, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
c = KafkaConsumer(topic, bootstrap_servers=addr, group_id=group, enable_auto_commit=False,
    auto_offset_reset='earliest', consumer_timeout_ms=60000, session_timeout_ms=6000, heartbeat_interval_ms=500)
got = []
for m in c:
    got.append([m.partition, m.offset])
    if len(got) >= n:
        break
c.commit()
c.close()
print(json.dumps(got))
`},
	"confluent-kafka-python": {"confluent_kafka", "python3-confluent-kafka", `
import sys, json, time
from confluent_kafka import Consumer
addr, topic, group, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
c = Consumer({'bootstrap.servers': addr, 'broker.address.family': 'v4', 'group.id': group,
    'enable.auto.commit': False, 'auto.offset.reset': 'earliest', 'session.timeout.ms': 6000})
c.subscribe([topic])
got, deadline = [], time.time() + 60
while len(got) < n and time.time() < deadline:
    m = c.poll(0.5)
    if m is None or m.error():
        continue
    got.append([m.partition(), m.offset()])
c.commit(asynchronous=False)
c.close()
print(json.dumps(got))
`},
}

func TestInteropPythonGroups(t *testing.T) {
	tb := startTestBroker(t, "")
	setBrokerConfigs(t, tb.addr, quickGroups...)
	for name, pc := range pythonGroupConsumers {
		t.Run(name, func(t *testing.T) {
			requirePythonModule(t, pc.module, pc.pkg)
			topic, group := "py-group-"+pc.module, "py-"+pc.module
			createTopics(t, tb.addr, topic, 2)
			produceEven(t, tb.addr, topic, 2, 50)
			seen := map[string]int{}
			for _, n := range []int{60, 40} {
				var got [][2]int64
				out := runCmd(t, "", systemPython, "-c", pc.script, tb.addr, topic, group, fmt.Sprint(n))
				if err := json.Unmarshal([]byte(out), &got); err != nil || len(got) != n {
					t.Fatalf("consumer read %d of %d records (%v): %s", len(got), n, err, out)
				}
				for _, r := range got {
					seen[fmt.Sprint(r)]++
				}
			}
			for p := range 2 {
				for o := range 50 {
					if k := fmt.Sprint([2]int64{int64(p), int64(o)}); seen[k] != 1 {
						t.Fatalf("partition %d offset %d read %d times across the two consumers", p, o, seen[k])
					}
				}
			}
		})
	}
}
