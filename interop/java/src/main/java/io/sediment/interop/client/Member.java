package io.sediment.interop.client;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;

/**
 * One group member polling on its own thread: it records every record it
 * gets, commits synchronously after each poll that returned records, and
 * logs its rebalance callbacks. Its state is read by the check's thread.
 */
final class Member implements AutoCloseable {
  final String name;
  private final KafkaConsumer<byte[], byte[]> consumer;
  private final Thread thread;
  private volatile boolean stop;
  private final AtomicReference<Throwable> failure = new AtomicReference<>();
  /** The partitions owned now (after the last callback). */
  private final Set<Integer> owned = ConcurrentHashMap.newKeySet();
  /** Each callback: "assigned [..]", "revoked [..]" or "lost [..]". */
  final List<String> events = new CopyOnWriteArrayList<>();
  /** Every record received, "partition@offset" to value, and how many came twice. */
  final Map<String, byte[]> received = new ConcurrentHashMap<>();
  volatile int duplicates;
  private volatile int generation = -1;

  Member(String name, String bootstrap, String topic, String... kv) {
    this.name = name;
    this.consumer = Records.consumer(bootstrap, kv);
    this.thread = new Thread(() -> loop(topic), "member-" + name);
    thread.setDaemon(true);
    thread.start();
  }

  private void loop(String topic) {
    try {
      consumer.subscribe(List.of(topic), new Listener());
      while (!stop) {
        var records = consumer.poll(Duration.ofMillis(100));
        for (ConsumerRecord<byte[], byte[]> r : records) {
          if (received.put(r.partition() + "@" + r.offset(), r.value()) != null) {
            duplicates++;
          }
        }
        if (!records.isEmpty()) {
          consumer.commitSync();
        }
        generation = consumer.groupMetadata().generationId();
      }
    } catch (Throwable e) {
      failure.set(e);
    } finally {
      consumer.close();
    }
  }

  private final class Listener implements ConsumerRebalanceListener {
    @Override
    public void onPartitionsRevoked(Collection<TopicPartition> parts) {
      consumer.commitSync();
      events.add("revoked " + ids(parts));
      parts.forEach(tp -> owned.remove(tp.partition()));
    }

    @Override
    public void onPartitionsAssigned(Collection<TopicPartition> parts) {
      events.add("assigned " + ids(parts));
      parts.forEach(tp -> owned.add(tp.partition()));
    }

    @Override
    public void onPartitionsLost(Collection<TopicPartition> parts) {
      events.add("lost " + ids(parts));
      parts.forEach(tp -> owned.remove(tp.partition()));
    }
  }

  static Set<Integer> ids(Collection<TopicPartition> parts) {
    Set<Integer> s = new TreeSet<>();
    parts.forEach(tp -> s.add(tp.partition()));
    return s;
  }

  Set<Integer> owned() {
    checkAlive();
    return new TreeSet<>(owned);
  }

  int generation() {
    checkAlive();
    return generation;
  }

  List<String> events() {
    return new ArrayList<>(events);
  }

  private void checkAlive() {
    Throwable e = failure.get();
    if (e != null) {
      throw Checks.fail(name + " failed: " + e);
    }
  }

  /** Stops polling and closes the consumer (which leaves unless static). */
  @Override
  public void close() throws InterruptedException {
    stop = true;
    thread.join(Duration.ofMinutes(1).toMillis());
    Checks.check(!thread.isAlive(), name + " did not close within a minute");
    checkAlive();
  }
}
