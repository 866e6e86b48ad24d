"""confluent-kafka (librdkafka) against a broker: an idempotent producer
with one codec writes N records (records.py), then a consumer assigned to
every partition reads the topic back from the beginning to its end.

Usage: confluent_roundtrip.py BOOTSTRAP TOPIC CODEC N
"""

import sys
import time

from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, Producer, TopicPartition

import records


def produce(addr, topic, codec, n):
    failed = []

    def delivered(err, msg):
        if err is not None:
            failed.append(str(err))

    p = Producer({"bootstrap.servers": addr, "enable.idempotence": True, "acks": "all",
                  "compression.codec": codec, "linger.ms": 20})
    for i in range(n):
        p.produce(topic, key=records.key(i), value=records.value(i), headers=records.headers(i),
                  on_delivery=delivered)
        p.poll(0)
    left = p.flush(60)
    if left or failed:
        records.report(error="undelivered %d: %s" % (left, failed[:3]))


def consume(addr, topic):
    c = Consumer({"bootstrap.servers": addr, "group.id": "unused", "enable.auto.commit": False,
                  "enable.partition.eof": True})
    parts = [TopicPartition(topic, q, OFFSET_BEGINNING)
             for q in c.list_topics(topic, timeout=30).topics[topic].partitions]
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
            records.report(error=str(m.error()))
        got.append(records.encode(m.partition(), m.offset(), m.key(), m.value(), m.headers()))
    c.close()
    if len(eof) < len(parts):
        records.report(got, "reached the end of %d of %d partitions in 120 s" % (len(eof), len(parts)))
    return got


def main():
    addr, topic, codec, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    produce(addr, topic, codec, n)
    records.report(consume(addr, topic))


if __name__ == "__main__":
    main()
