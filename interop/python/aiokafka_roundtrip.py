"""aiokafka against a broker, on asyncio: an idempotent producer with one
codec sends N records (records.py) concurrently, awaits every delivery and
lists the topic's partitions; then a consumer assigned to all of them reads
the topic back from the beginning to the end offsets it lists.

Usage: aiokafka_roundtrip.py BOOTSTRAP TOPIC CODEC N
"""

import asyncio
import sys

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition

import records


async def produce(addr, topic, codec, n):
    p = AIOKafkaProducer(bootstrap_servers=addr, enable_idempotence=True, acks="all",
                         compression_type=None if codec == "none" else codec, linger_ms=20)
    await p.start()
    try:
        sent = [await p.send(topic, key=records.key(i), value=records.value(i), headers=records.headers(i))
                for i in range(n)]
        await asyncio.gather(*sent)
        return sorted(await p.partitions_for(topic))
    finally:
        await p.stop()


async def consume(addr, topic, partitions):
    c = AIOKafkaConsumer(bootstrap_servers=addr, enable_auto_commit=False)
    await c.start()
    try:
        parts = [TopicPartition(topic, q) for q in partitions]
        c.assign(parts)
        await c.seek_to_beginning(*parts)
        ends = await c.end_offsets(parts)
        got = []
        while [tp for tp in parts if await c.position(tp) < ends[tp]]:
            batches = await c.getmany(timeout_ms=1000)
            for tp, msgs in batches.items():
                got.extend(records.encode(m.partition, m.offset, m.key, m.value, m.headers) for m in msgs)
        return got
    finally:
        await c.stop()


async def main():
    addr, topic, codec, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    partitions = await produce(addr, topic, codec, n)
    got = await asyncio.wait_for(consume(addr, topic, partitions), 120)
    records.report(got)


if __name__ == "__main__":
    asyncio.run(main())
