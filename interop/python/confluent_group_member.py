"""confluent-kafka (librdkafka) as one of several members of a consumer
group: it subscribes and reads, committing what it read whenever its
partitions are revoked, until its standard input closes; then it reads the
partitions it holds to their end, commits, leaves the group and reports
every record it read.

Usage: confluent_group_member.py BOOTSTRAP TOPIC GROUP
"""

import sys
import threading
import time

from confluent_kafka import Consumer, KafkaError, KafkaException

import records


def commit(c):
    try:
        c.commit(asynchronous=False)
    except KafkaException as e:
        if e.args[0].code() != KafkaError._NO_OFFSET:  # nothing read since the last commit
            raise


def at_end(c):
    assigned = c.assignment()
    for tp in c.position(assigned):
        if tp.offset < c.get_watermark_offsets(tp, timeout=10, cached=False)[1]:
            return False
    return True


def main():
    addr, topic, group = sys.argv[1], sys.argv[2], sys.argv[3]
    stop = threading.Event()
    threading.Thread(target=lambda: (sys.stdin.read(), stop.set()), daemon=True).start()
    c = Consumer({"bootstrap.servers": addr, "group.id": group, "auto.offset.reset": "earliest",
                  "enable.auto.commit": False})
    closing = threading.Event()
    # close() revokes too, after the last commit: nothing is left to commit.
    c.subscribe([topic], on_revoke=lambda consumer, parts: closing.is_set() or commit(consumer))
    got, deadline = [], time.monotonic() + 180
    while True:
        if time.monotonic() > deadline:
            records.report(got, "no end of input within 180 s")
        msgs = c.consume(500, 0.5)
        for m in msgs:
            if m.error():
                records.report(got, str(m.error()))
            got.append(records.encode(m.partition(), m.offset(), m.key(), m.value(), m.headers()))
        # The end is looked up only when nothing is left to read: each look
        # is a request per partition.
        if not msgs and stop.is_set() and at_end(c):
            break
    commit(c)
    closing.set()
    c.close()
    records.report(got)


if __name__ == "__main__":
    main()
