"""confluent-kafka (librdkafka) transactions: a consume-transform-produce
loop. A read_committed group member reads N records (records.py) from the
input topic; a transactional producer copies them to the output topic in
chunks of CHUNK records, each chunk in one transaction with the input
offsets it consumed (send_offsets_to_transaction). The second chunk is
aborted once, the group's committed offsets checked to be the first
chunk's, and sent again. Then a read_committed consumer reads the output
back from the beginning to its end: each record exactly once.

Usage: confluent_txn.py BOOTSTRAP INPUT OUTPUT GROUP N
"""

import sys
import time

from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, Producer, TopicPartition

import records

CHUNK = 50


def read_input(c, n):
    got, deadline = [], time.monotonic() + 120
    while len(got) < n and time.monotonic() < deadline:
        m = c.poll(5)
        if m is None:
            continue
        if m.error():
            records.report(error="input: %s" % m.error())
        got.append(m)
    if len(got) < n:
        records.report(error="read %d of %d input records in 120 s" % (len(got), n))
    return got


def offsets_after(msgs):
    """The offsets to commit once msgs are processed: per partition, the
    offset after the last one."""
    last = {}
    for m in msgs:
        last[(m.topic(), m.partition())] = max(last.get((m.topic(), m.partition()), -1), m.offset())
    return [TopicPartition(t, p, o + 1) for (t, p), o in sorted(last.items())]


def transact(p, c, out, msgs, done, commit):
    p.begin_transaction()
    for m in msgs:
        p.produce(out, key=m.key(), value=m.value(), headers=m.headers())
    p.send_offsets_to_transaction(offsets_after(done + msgs), c.consumer_group_metadata(), 60)
    if commit:
        p.commit_transaction(60)
    else:
        p.abort_transaction(60)


def check_committed(c, want):
    got = c.committed([TopicPartition(tp.topic, tp.partition) for tp in want], timeout=60)
    have = {(tp.topic, tp.partition): tp.offset for tp in got}
    for tp in want:
        if have.get((tp.topic, tp.partition)) != tp.offset:
            records.report(error="after the abort the group committed %s, want %s" % (sorted(have.items()), want))


def read_output(addr, out):
    c = Consumer({"bootstrap.servers": addr, "group.id": "unused", "enable.auto.commit": False,
                  "enable.partition.eof": True, "isolation.level": "read_committed"})
    parts = [TopicPartition(out, q, OFFSET_BEGINNING) for q in c.list_topics(out, timeout=30).topics[out].partitions]
    c.assign(parts)
    got, eof, deadline = [], set(), time.monotonic() + 120
    while len(eof) < len(parts) and time.monotonic() < deadline:
        m = c.poll(5)
        if m is None:
            continue
        if m.error():
            if m.error().code() == KafkaError._PARTITION_EOF:
                eof.add(m.partition())
                continue
            records.report(got, "output: %s" % m.error())
        got.append(records.encode(m.partition(), m.offset(), m.key(), m.value(), m.headers()))
    c.close()
    if len(eof) < len(parts):
        records.report(got, "reached the end of %d of %d output partitions in 120 s" % (len(eof), len(parts)))
    return got


def main():
    addr, inp, out, group, n = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
    c = Consumer({"bootstrap.servers": addr, "group.id": group, "auto.offset.reset": "earliest",
                  "enable.auto.commit": False, "isolation.level": "read_committed"})
    c.subscribe([inp])
    p = Producer({"bootstrap.servers": addr, "transactional.id": group + "-tx", "linger.ms": 5})
    p.init_transactions(60)
    msgs = read_input(c, n)
    chunks = [msgs[i:i + CHUNK] for i in range(0, len(msgs), CHUNK)]
    done = []
    for k, chunk in enumerate(chunks):
        if k == 1:
            transact(p, c, out, chunk, done, False)
            check_committed(c, offsets_after(done))
        transact(p, c, out, chunk, done, True)
        done += chunk
    c.close()
    records.report(read_output(addr, out))


if __name__ == "__main__":
    main()
