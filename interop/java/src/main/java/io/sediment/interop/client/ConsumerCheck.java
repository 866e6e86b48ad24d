package io.sediment.interop.client;

import static io.sediment.interop.client.Checks.check;
import static io.sediment.interop.client.Checks.equal;
import static io.sediment.interop.client.Checks.ok;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.consumer.OffsetAndTimestamp;
import org.apache.kafka.clients.consumer.OffsetOutOfRangeException;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;

/**
 * KafkaConsumer against a broker: seek (and an out-of-range position with
 * no reset policy), offsetsForTimes, pause/resume, committed offsets with
 * metadata; {@link GroupCheck} has the group protocol. Every record is
 * compared byte for byte.
 *
 * <p>Usage: ConsumerCheck BOOTSTRAP PREFIX. It creates PREFIX-data (4
 * partitions of {@value #PER_PARTITION} records) and PREFIX-times, and the
 * group PREFIX-committed.
 */
public final class ConsumerCheck {
  static final int PARTITIONS = 4;
  static final int PER_PARTITION = 50;
  static final long T0 = Checks.RECENT;

  private ConsumerCheck() {}

  public static void main(String[] args) {
    Checks.run("ConsumerCheck", args, 2, () -> {
      String bootstrap = args[0];
      String prefix = args[1];
      String data = prefix + "-data";
      String times = prefix + "-times";
      try (Admin admin = Checks.admin(bootstrap)) {
        Checks.createTopic(admin, data, PARTITIONS, Map.of());
        Checks.createTopic(admin, times, 1, Map.of());
      }
      produce(bootstrap, data, times);
      seek(bootstrap, data);
      offsetsForTimes(bootstrap, times);
      pauseResume(bootstrap, data);
      committed(bootstrap, data, prefix + "-committed");
    });
  }

  static byte[] value(int partition, int i) {
    return ("p" + partition + "-" + i).getBytes(StandardCharsets.UTF_8);
  }

  /** Fills data and, unless times is null, times. */
  static void produce(String bootstrap, String data, String times) throws Exception {
    try (KafkaProducer<byte[], byte[]> p = Records.producer(bootstrap, "linger.ms", "10")) {
      for (int i = 0; i < PER_PARTITION; i++) {
        for (int part = 0; part < PARTITIONS; part++) {
          p.send(new ProducerRecord<>(data, part, null, value(part, i)));
        }
      }
      for (int i = 0; times != null && i < 20; i++) {
        p.send(new ProducerRecord<>(times, 0, T0 + i * 1000L, null, value(0, i)));
      }
      p.flush();
    }
  }

  /** seek, seekToBeginning/End, position, and OffsetOutOfRangeException. */
  static void seek(String bootstrap, String data) throws Exception {
    TopicPartition tp = new TopicPartition(data, 1);
    try (KafkaConsumer<byte[], byte[]> c = Records.consumer(bootstrap, "auto.offset.reset", "none")) {
      c.assign(List.of(tp));
      c.seek(tp, 20);
      List<ConsumerRecord<byte[], byte[]>> got = Records.poll(c, PER_PARTITION - 20);
      for (int i = 0; i < got.size(); i++) {
        equal(20L + i, got.get(i).offset(), "offset after seek(20)");
        equal(value(1, 20 + i), got.get(i).value(), "value at offset " + (20 + i));
      }
      equal((long) PER_PARTITION, c.position(tp), "position after reading to the end");
      c.seekToBeginning(List.of(tp));
      equal(0L, c.position(tp), "position after seekToBeginning");
      c.seekToEnd(List.of(tp));
      equal((long) PER_PARTITION, c.position(tp), "position after seekToEnd");
      c.seek(tp, PER_PARTITION - 1);
      equal(value(1, PER_PARTITION - 1), Records.poll(c, 1).get(0).value(), "the last record after seek");
      c.seek(tp, 1000);
      OffsetOutOfRangeException e = Checks.expectThrows(OffsetOutOfRangeException.class,
          "poll at offset 1000 of " + PER_PARTITION + " with auto.offset.reset=none", () -> pollUntilThrows(c));
      equal(Map.of(tp, 1000L), e.offsetOutOfRangePartitions(), "partitions out of range");
    }
    ok("seek, seekToBeginning, seekToEnd, position; an offset past the end: OffsetOutOfRangeException");
  }

  private static void pollUntilThrows(KafkaConsumer<byte[], byte[]> c) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (System.nanoTime() < deadline) {
      check(c.poll(Duration.ofMillis(200)).isEmpty(), "records returned at an offset past the end");
    }
  }

  /** offsetsForTimes finds the first record at or after a timestamp. */
  static void offsetsForTimes(String bootstrap, String times) throws Exception {
    TopicPartition tp = new TopicPartition(times, 0);
    try (KafkaConsumer<byte[], byte[]> c = Records.consumer(bootstrap)) {
      equal(Map.of(tp, 0L), c.beginningOffsets(List.of(tp)), "beginningOffsets");
      equal(Map.of(tp, 20L), c.endOffsets(List.of(tp)), "endOffsets");
      long[][] cases = {{T0 - 1, 0}, {T0, 0}, {T0 + 5500, 6}, {T0 + 6000, 6}, {T0 + 19000, 19}};
      for (long[] cs : cases) {
        OffsetAndTimestamp got = c.offsetsForTimes(Map.of(tp, cs[0])).get(tp);
        check(got != null, "offsetsForTimes(" + cs[0] + ") is null");
        equal(cs[1], got.offset(), "offsetsForTimes(T0+" + (cs[0] - T0) + ") offset");
        equal(T0 + cs[1] * 1000, got.timestamp(), "offsetsForTimes(T0+" + (cs[0] - T0) + ") timestamp");
      }
      equal(null, c.offsetsForTimes(Map.of(tp, T0 + 19001)).get(tp), "offsetsForTimes after the last timestamp");
      c.assign(List.of(tp));
      c.seek(tp, c.offsetsForTimes(Map.of(tp, T0 + 5500)).get(tp).offset());
      ConsumerRecord<byte[], byte[]> r = Records.poll(c, 14).get(0);
      equal(T0 + 6000, r.timestamp(), "timestamp of the record found by time");
      equal(value(0, 6), r.value(), "value of the record found by time");
    }
    ok("beginningOffsets, endOffsets, offsetsForTimes (before, at, between, after the records)");
  }

  /** A paused partition returns nothing until it is resumed. */
  static void pauseResume(String bootstrap, String data) throws Exception {
    TopicPartition p2 = new TopicPartition(data, 2);
    TopicPartition p3 = new TopicPartition(data, 3);
    try (KafkaConsumer<byte[], byte[]> c = Records.consumer(bootstrap)) {
      c.assign(List.of(p2, p3));
      c.seekToBeginning(List.of(p2, p3));
      c.pause(List.of(p3));
      equal(Set.of(p3), c.paused(), "paused()");
      List<ConsumerRecord<byte[], byte[]>> got = Records.poll(c, PER_PARTITION);
      for (int i = 0; i < PER_PARTITION; i++) {
        equal(2, got.get(i).partition(), "partition of a record while partition 3 is paused");
        equal(value(2, i), got.get(i).value(), "partition 2 offset " + i);
      }
      for (int i = 0; i < 5; i++) {
        check(c.poll(Duration.ofMillis(100)).isEmpty(), "a record while partition 3 is paused");
      }
      equal(0L, c.position(p3), "position of the paused partition");
      c.resume(List.of(p3));
      equal(Set.of(), c.paused(), "paused() after resume");
      got = Records.poll(c, PER_PARTITION);
      for (int i = 0; i < PER_PARTITION; i++) {
        equal(3, got.get(i).partition(), "partition of a record after resume");
        equal(value(3, i), got.get(i).value(), "partition 3 offset " + i);
      }
    }
    ok("pause: no records from the paused partition; resume: all of them");
  }

  /** commitSync of explicit offsets with metadata, read back by committed(). */
  static void committed(String bootstrap, String data, String group) throws Exception {
    TopicPartition tp = new TopicPartition(data, 0);
    OffsetAndMetadata want = new OffsetAndMetadata(17, "metadata ünïcødé");
    try (KafkaConsumer<byte[], byte[]> c = Records.consumer(bootstrap, "group.id", group)) {
      c.assign(List.of(tp));
      equal(null, c.committed(Set.of(tp)).get(tp), "committed() before any commit");
      c.commitSync(Map.of(tp, want));
    }
    try (KafkaConsumer<byte[], byte[]> c = Records.consumer(bootstrap, "group.id", group)) {
      OffsetAndMetadata got = c.committed(Set.of(tp)).get(tp);
      check(got != null, "committed() after commitSync is null");
      equal(want.offset(), got.offset(), "committed offset");
      equal(want.metadata(), got.metadata(), "committed metadata");
      c.assign(List.of(tp));
      List<ConsumerRecord<byte[], byte[]>> rs = Records.poll(c, PER_PARTITION - 17);
      equal(17L, rs.get(0).offset(), "first offset read from the committed position");
    }
    ok("commitSync with metadata, committed(), and a new consumer starts at the committed offset");
  }
}
