package io.sediment.interop.client;

import static io.sediment.interop.client.Checks.check;
import static io.sediment.interop.client.Checks.equal;
import static io.sediment.interop.client.Checks.ok;

import io.sediment.interop.client.Checks.Sent;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;

/**
 * KafkaProducer against a broker: the idempotent default with every
 * compression codec, headers, records at and just over max.message.bytes,
 * and acks 0, 1 and all. Every record is read back byte for byte.
 *
 * <p>Usage: ProducerCheck BOOTSTRAP PREFIX. It creates the topics
 * PREFIX-codec-CODEC (2 partitions), PREFIX-large and PREFIX-acks; the Go
 * test then checks the stored batches (codec, producer id).
 */
public final class ProducerCheck {
  static final String[] CODECS = {"none", "gzip", "snappy", "lz4", "zstd"};
  static final int PER_CODEC = 300;
  /** max.message.bytes of PREFIX-large. */
  static final int MAX_MESSAGE = 262144;
  /** Kafka's default max.message.bytes (message.max.bytes), PREFIX-default-max's. */
  static final int DEFAULT_MAX_MESSAGE = 1048588;
  /**
   * Bytes of a batch of one record beside its value: the 61-byte batch
   * header, then length (3), attributes, timestamp and offset deltas, null
   * key length, value length (3) and header count.
   */
  static final int ONE_RECORD_OVERHEAD = 61 + 3 + 1 + 1 + 1 + 1 + 3 + 1;

  private ProducerCheck() {}

  public static void main(String[] args) {
    Checks.run("ProducerCheck", args, 2, () -> {
      String bootstrap = args[0];
      String prefix = args[1];
      try (Admin admin = Checks.admin(bootstrap)) {
        for (String codec : CODECS) {
          Checks.createTopic(admin, prefix + "-codec-" + codec, 2, Map.of());
        }
        Checks.createTopic(admin, prefix + "-large", 1,
            Checks.configs("max.message.bytes", String.valueOf(MAX_MESSAGE)));
        Checks.createTopic(admin, prefix + "-acks", 1, Map.of());
        Checks.createTopic(admin, prefix + "-default-max", 1, Map.of());
      }
      for (String codec : CODECS) {
        codec(bootstrap, prefix + "-codec-" + codec, codec);
      }
      large(bootstrap, prefix + "-large", MAX_MESSAGE);
      large(bootstrap, prefix + "-default-max", DEFAULT_MAX_MESSAGE);
      acks(bootstrap, prefix + "-acks");
    });
  }

  /** Produces with the default (idempotent) settings and codec, reads back. */
  static void codec(String bootstrap, String topic, String codec) throws Exception {
    Random rnd = new Random(codec.hashCode());
    Map<TopicPartition, Map<Long, Sent>> sent = new HashMap<>();
    try (KafkaProducer<byte[], byte[]> p = Records.producer(bootstrap,
        "compression.type", codec, "linger.ms", "20")) {
      List<Future<RecordMetadata>> futures = new ArrayList<>();
      List<Sent> order = new ArrayList<>();
      for (int i = 0; i < PER_CODEC; i++) {
        Sent s = record(rnd, i);
        order.add(s);
        futures.add(p.send(new ProducerRecord<>(topic, i % 2, s.timestamp, s.key, s.value, List.of(s.headers))));
      }
      p.flush();
      for (int i = 0; i < futures.size(); i++) {
        RecordMetadata md = futures.get(i).get(60, TimeUnit.SECONDS);
        Sent s = order.get(i);
        Sent stamped = new Sent(s.key, s.value, s.headers, md.timestamp());
        sent.computeIfAbsent(new TopicPartition(topic, md.partition()), k -> new HashMap<>()).put(md.offset(), stamped);
      }
    }
    for (Map.Entry<TopicPartition, Map<Long, Sent>> e : sent.entrySet()) {
      Map<Long, Sent> byOffset = e.getValue();
      for (long off = 0; off < byOffset.size(); off++) {
        check(byOffset.containsKey(off), e.getKey() + ": offsets not contiguous from 0: no " + off);
      }
      List<ConsumerRecord<byte[], byte[]>> got = Records.read(bootstrap, e.getKey(), 0, byOffset.size());
      for (ConsumerRecord<byte[], byte[]> r : got) {
        Checks.sameRecord(byOffset.get(r.offset()), r, e.getKey() + "@" + r.offset());
      }
    }
    ok("idempotent producer, compression " + codec + ": " + PER_CODEC + " records with headers read back byte for byte");
  }

  /**
   * Record i: keys null or bytes, values null, empty or up to 4 KiB, headers
   * none, repeated keys or null values, and every third record an explicit
   * timestamp.
   */
  static Sent record(Random rnd, int i) {
    byte[] key = i % 7 == 0 ? null : Checks.bytes(rnd, 1 + rnd.nextInt(32));
    byte[] value = switch (i % 11) {
      case 0 -> null;
      case 1 -> new byte[0];
      case 2 -> ("text value " + i).getBytes(StandardCharsets.UTF_8);
      default -> Checks.bytes(rnd, rnd.nextInt(4096));
    };
    Header[] headers = switch (i % 4) {
      case 0 -> new Header[0];
      case 1 -> new Header[] {new RecordHeader("h", Checks.bytes(rnd, 8))};
      case 2 -> new Header[] {new RecordHeader("dup", "a".getBytes(StandardCharsets.UTF_8)),
          new RecordHeader("dup", "b".getBytes(StandardCharsets.UTF_8)),
          new RecordHeader("null-value", (byte[]) null)};
      default -> new Header[] {new RecordHeader("ünïcødé-ключ", Checks.bytes(rnd, 100)),
          new RecordHeader("empty", new byte[0])};
    };
    Long ts = i % 3 == 0 ? Checks.RECENT + i : null;
    return new Sent(key, value, headers, ts);
  }

  /**
   * A batch of exactly max.message.bytes is accepted and read back; one
   * byte more is refused with RecordTooLargeException (MESSAGE_TOO_LARGE),
   * and the same idempotent producer keeps working after it.
   */
  static void large(String bootstrap, String topic, int maxMessage) throws Exception {
    Random rnd = new Random(7);
    byte[] fits = Checks.bytes(rnd, maxMessage - ONE_RECORD_OVERHEAD);
    byte[] over = Checks.bytes(rnd, maxMessage - ONE_RECORD_OVERHEAD + 1);
    byte[] after = Checks.bytes(rnd, 1000);
    TopicPartition tp = new TopicPartition(topic, 0);
    try (KafkaProducer<byte[], byte[]> p = Records.producer(bootstrap,
        "compression.type", "none", "max.request.size", String.valueOf(4 * maxMessage))) {
      RecordMetadata md = p.send(new ProducerRecord<>(topic, 0, null, fits)).get(60, TimeUnit.SECONDS);
      equal(0L, md.offset(), "offset of the record of exactly max.message.bytes");
      Checks.expectThrows(RecordTooLargeException.class, "a batch one byte over max.message.bytes",
          () -> p.send(new ProducerRecord<>(topic, 0, null, over)).get(60, TimeUnit.SECONDS));
      md = p.send(new ProducerRecord<>(topic, 0, null, after)).get(60, TimeUnit.SECONDS);
      equal(1L, md.offset(), "offset of the record sent after the refused one");
    }
    List<ConsumerRecord<byte[], byte[]>> got = Records.read(bootstrap, tp, 0, 2,
        "max.partition.fetch.bytes", String.valueOf(maxMessage));
    equal(fits, got.get(0).value(), "the record of exactly max.message.bytes");
    equal(after, got.get(1).value(), "the record after the refused one");
    ok("a batch of exactly max.message.bytes (" + maxMessage + ") read back; one byte over: RecordTooLargeException; the producer goes on");
  }

  /** acks=0, 1 and all each deliver their records, in order. */
  static void acks(String bootstrap, String topic) throws Exception {
    String[][] modes = {
      {"acks", "0", "enable.idempotence", "false"},
      {"acks", "1", "enable.idempotence", "false"},
      {"acks", "all"},
    };
    int per = 50;
    List<byte[]> values = new ArrayList<>();
    for (String[] mode : modes) {
      try (KafkaProducer<byte[], byte[]> p = Records.producer(bootstrap, mode)) {
        List<Future<RecordMetadata>> futures = new ArrayList<>();
        for (int i = 0; i < per; i++) {
          byte[] v = ("acks=" + mode[1] + " #" + i).getBytes(StandardCharsets.UTF_8);
          values.add(v);
          futures.add(p.send(new ProducerRecord<>(topic, 0, null, v)));
        }
        p.flush();
        for (int i = 0; i < per; i++) {
          RecordMetadata md = futures.get(i).get(60, TimeUnit.SECONDS);
          // acks=0 gets no answer, so the client cannot know the offset.
          long want = mode[1].equals("0") ? -1 : values.size() - per + i;
          equal(want, md.offset(), "acks=" + mode[1] + " record " + i + " offset");
        }
      }
      Records.awaitEnd(bootstrap, new TopicPartition(topic, 0), values.size());
    }
    List<ConsumerRecord<byte[], byte[]>> got = Records.read(bootstrap, new TopicPartition(topic, 0), 0, values.size());
    for (int i = 0; i < values.size(); i++) {
      equal(values.get(i), got.get(i).value(), "acks topic offset " + i);
    }
    ok("acks=0, acks=1 and acks=all: " + values.size() + " records read back in order");
  }
}
