"""confluent-kafka (librdkafka) as a member of a consumer group: it
subscribes, reads N records from where the group's committed offsets are
(the beginning for a new group), commits them synchronously and leaves.

Usage: confluent_group.py BOOTSTRAP TOPIC GROUP N
"""

import sys
import time

from confluent_kafka import Consumer

import records


def main():
    addr, topic, group, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    c = Consumer({"bootstrap.servers": addr, "group.id": group, "auto.offset.reset": "earliest",
                  "enable.auto.commit": False})
    c.subscribe([topic])
    got, deadline = [], time.monotonic() + 120
    while len(got) < n and time.monotonic() < deadline:
        m = c.poll(5)
        if m is None:
            continue
        if m.error():
            records.report(error=str(m.error()))
        got.append(records.encode(m.partition(), m.offset(), m.key(), m.value(), m.headers()))
    if len(got) < n:
        records.report(got, "read %d of %d records in 120 s" % (len(got), n))
    c.commit(asynchronous=False)
    c.close()
    records.report(got)


if __name__ == "__main__":
    main()
