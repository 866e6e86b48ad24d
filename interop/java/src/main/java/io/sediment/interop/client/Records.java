package io.sediment.interop.client;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/** Producers and consumers of raw bytes, and reading a partition back. */
final class Records {
  private Records() {}

  /** A byte producer with extra settings given as key, value pairs. */
  static KafkaProducer<byte[], byte[]> producer(String bootstrap, String... kv) {
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 60000);
    p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 30000);
    put(p, kv);
    return new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer());
  }

  /** A byte consumer with extra settings given as key, value pairs. */
  static KafkaConsumer<byte[], byte[]> consumer(String bootstrap, String... kv) {
    Properties p = new Properties();
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    put(p, kv);
    return new KafkaConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer());
  }

  private static void put(Properties p, String... kv) {
    for (int i = 0; i + 1 < kv.length; i += 2) {
      p.put(kv[i], kv[i + 1]);
    }
  }

  /**
   * Reads partition tp from offset from until it has count records (or a
   * minute passes), with a consumer that belongs to no group.
   */
  static List<ConsumerRecord<byte[], byte[]>> read(String bootstrap, TopicPartition tp, long from, int count, String... kv) {
    try (KafkaConsumer<byte[], byte[]> c = consumer(bootstrap, kv)) {
      c.assign(List.of(tp));
      c.seek(tp, from);
      return poll(c, count);
    }
  }

  /**
   * Waits until tp's end offset reaches want (acks=0 records are written
   * with no answer, so their producer cannot tell when they landed).
   */
  static void awaitEnd(String bootstrap, TopicPartition tp, long want) throws InterruptedException {
    try (KafkaConsumer<byte[], byte[]> c = consumer(bootstrap)) {
      long deadline = System.nanoTime() + Duration.ofMinutes(1).toNanos();
      long end = -1;
      while (System.nanoTime() < deadline) {
        end = c.endOffsets(List.of(tp)).get(tp);
        if (end >= want) {
          Checks.equal(want, end, tp + " end offset");
          return;
        }
        Thread.sleep(100);
      }
      throw Checks.fail(tp + ": end offset " + end + " after a minute, want " + want);
    }
  }

  /** Polls c until it has count records or a minute passes. */
  static List<ConsumerRecord<byte[], byte[]>> poll(KafkaConsumer<byte[], byte[]> c, int count) {
    List<ConsumerRecord<byte[], byte[]>> out = new ArrayList<>();
    long deadline = System.nanoTime() + Duration.ofMinutes(1).toNanos();
    while (out.size() < count && System.nanoTime() < deadline) {
      for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(200))) {
        out.add(r);
      }
    }
    Checks.check(out.size() == count, "read " + out.size() + " records, want " + count);
    return out;
  }
}
