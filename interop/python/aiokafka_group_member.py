"""aiokafka as one of several members of a consumer group, on asyncio: it
subscribes and reads, committing what it read whenever its partitions are
revoked, until its standard input closes; then it reads the partitions it
holds to their end, commits, leaves the group and reports every record it
read.

Usage: aiokafka_group_member.py BOOTSTRAP TOPIC GROUP
"""

import asyncio
import sys

from aiokafka import AIOKafkaConsumer, ConsumerRebalanceListener

import records


class CommitOnRevoke(ConsumerRebalanceListener):
    def __init__(self):
        self.consumer = None

    async def on_partitions_revoked(self, revoked):
        await self.consumer.commit()

    async def on_partitions_assigned(self, assigned):
        pass


async def at_end(c):
    assigned = list(c.assignment())
    ends = await c.end_offsets(assigned) if assigned else {}
    return all([await c.position(tp) >= ends[tp] for tp in assigned])


async def read(c, stop, got):
    while True:
        batches = await c.getmany(timeout_ms=500)
        for tp, msgs in batches.items():
            got.extend(records.encode(m.partition, m.offset, m.key, m.value, m.headers) for m in msgs)
        # The end is looked up only when nothing is left to read.
        if not batches and stop.done() and await at_end(c):
            return


async def main():
    addr, topic, group = sys.argv[1], sys.argv[2], sys.argv[3]
    stop = asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
    c = AIOKafkaConsumer(bootstrap_servers=addr, group_id=group, auto_offset_reset="earliest",
                         enable_auto_commit=False)
    listener = CommitOnRevoke()
    listener.consumer = c
    await c.start()
    c.subscribe([topic], listener=listener)
    got = []
    try:
        await asyncio.wait_for(read(c, stop, got), 180)
        await c.commit()
    finally:
        await c.stop()
    records.report(got)


if __name__ == "__main__":
    asyncio.run(main())
