"""aiokafka as a member of a consumer group, on asyncio: it subscribes,
reads N records from where the group's committed offsets are (the
beginning for a new group), commits them and leaves.

Usage: aiokafka_group.py BOOTSTRAP TOPIC GROUP N
"""

import asyncio
import sys

from aiokafka import AIOKafkaConsumer

import records


async def read(c, n):
    got = []
    while len(got) < n:
        batches = await c.getmany(timeout_ms=1000, max_records=n - len(got))
        for tp, msgs in batches.items():
            got.extend(records.encode(m.partition, m.offset, m.key, m.value, m.headers) for m in msgs)
    return got


async def main():
    addr, topic, group, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    c = AIOKafkaConsumer(topic, bootstrap_servers=addr, group_id=group, auto_offset_reset="earliest",
                         enable_auto_commit=False)
    await c.start()
    try:
        got = await asyncio.wait_for(read(c, n), 120)
        await c.commit()
    finally:
        await c.stop()
    records.report(got)


if __name__ == "__main__":
    asyncio.run(main())
