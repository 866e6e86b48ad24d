package io.sediment.interop.client;

import static io.sediment.interop.client.Checks.check;
import static io.sediment.interop.client.Checks.equal;
import static io.sediment.interop.client.Checks.ok;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListConsumerGroupOffsetsOptions;
import org.apache.kafka.clients.admin.ProducerState;
import org.apache.kafka.clients.admin.TransactionDescription;
import org.apache.kafka.clients.admin.TransactionListing;
import org.apache.kafka.clients.admin.TransactionState;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.protocol.Errors;

/**
 * Transactions with the Java client: a transactional KafkaProducer in a
 * consume-transform-produce loop (initTransactions, beginTransaction, send,
 * sendOffsetsToTransaction with the consumer group's metadata, commit and
 * abort), a transaction left open while a read_committed consumer waits at
 * the last stable offset (and Admin lists and describes it and its
 * producer), a zombie producer fenced by a newer one with the same
 * transactional.id, one fenced by Admin.fenceProducers, and a transaction
 * timeout above the broker's maximum. read_committed consumers must see exactly the committed
 * records, in order; read_uncommitted ones every record; the group's
 * offsets move only when a transaction commits.
 *
 * <p>Usage: TxnCheck BOOTSTRAP PREFIX. It creates PREFIX-in (1 partition),
 * PREFIX-out ({@value #OUT_PARTITIONS} partitions), the group PREFIX-etl
 * and the transactional ids PREFIX-etl-tx, PREFIX-zombie-tx,
 * PREFIX-fenced-tx and PREFIX-slow-tx.
 */
public final class TxnCheck {
  static final int OUT_PARTITIONS = 3;
  static final int CHUNK = 10;

  private TxnCheck() {}

  public static void main(String[] args) {
    Checks.run("TxnCheck", args, 2, () -> {
      String bootstrap = args[0];
      String prefix = args[1];
      String in = prefix + "-in";
      String out = prefix + "-out";
      String group = prefix + "-etl";
      try (Admin admin = Checks.admin(bootstrap)) {
        Checks.createTopic(admin, in, 1, Map.of());
        Checks.createTopic(admin, out, OUT_PARTITIONS, Map.of());
        try (KafkaProducer<byte[], byte[]> p = Records.producer(bootstrap)) {
          for (int i = 0; i < 3 * CHUNK; i++) {
            p.send(new ProducerRecord<>(in, 0, null, bytes("in-" + i)));
          }
          p.flush();
        }
        List<String> committed = consumeTransformProduce(bootstrap, admin, in, out, group, prefix + "-etl-tx");
        committed.addAll(openTransaction(bootstrap, admin, out, prefix + "-etl-tx"));
        zombie(bootstrap, out, prefix + "-zombie-tx");
        fenced(bootstrap, admin, out, prefix + "-fenced-tx");
        timeoutAboveMax(bootstrap, prefix + "-slow-tx");
        readBack(bootstrap, out, committed);
      }
    });
  }

  static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  static KafkaProducer<byte[], byte[]> txnProducer(String bootstrap, String txnId, String... kv) {
    List<String> all = new ArrayList<>(List.of("transactional.id", txnId, "linger.ms", "5"));
    all.addAll(List.of(kv));
    return Records.producer(bootstrap, all.toArray(new String[0]));
  }

  /**
   * The exactly-once loop: chunk k of the input becomes CHUNK records of
   * the output, spread over its partitions, in one transaction with the
   * input offsets. Chunk 1 is aborted once and then processed again.
   * Returns the values of the committed output records.
   */
  static List<String> consumeTransformProduce(String bootstrap, Admin admin, String in, String out, String group, String txnId)
      throws Exception {
    TopicPartition inTp = new TopicPartition(in, 0);
    List<String> committed = new ArrayList<>();
    try (KafkaConsumer<byte[], byte[]> c = Records.consumer(bootstrap, "group.id", group, "isolation.level", "read_committed");
        KafkaProducer<byte[], byte[]> p = txnProducer(bootstrap, txnId)) {
      p.initTransactions();
      ok("initTransactions of " + txnId);
      c.subscribe(List.of(in));
      List<ConsumerRecord<byte[], byte[]>> input = Records.poll(c, 3 * CHUNK);
      for (int i = 0; i < input.size(); i++) {
        equal(bytes("in-" + i), input.get(i).value(), "input record " + i);
      }
      committed.addAll(transform(p, c, out, input, 0, "commit", true));
      awaitCommitted(admin, group, inTp, 10, "group offset after the first commit");
      ok("commit: the group's offset moved with the transaction");

      transform(p, c, out, input, 1, "abort", false);
      awaitCommitted(admin, group, inTp, 10, "group offset after an abort");
      ok("abort: the group's offset stayed");

      committed.addAll(transform(p, c, out, input, 1, "commit", true));
      committed.addAll(transform(p, c, out, input, 2, "commit", true));
      awaitCommitted(admin, group, inTp, 30, "group offset after the last commit");
      ok("commit after an abort: the group's offset moved");
    }
    return committed;
  }

  /** Sends chunk of input as one transaction, committed or aborted. */
  static List<String> transform(KafkaProducer<byte[], byte[]> p, KafkaConsumer<byte[], byte[]> c, String out,
      List<ConsumerRecord<byte[], byte[]>> input, int chunk, String kind, boolean commit) throws Exception {
    List<String> values = new ArrayList<>();
    p.beginTransaction();
    for (int i = chunk * CHUNK; i < (chunk + 1) * CHUNK; i++) {
      String v = kind + "-" + new String(input.get(i).value(), StandardCharsets.UTF_8);
      p.send(new ProducerRecord<>(out, i % OUT_PARTITIONS, null, bytes(v))).get(60, TimeUnit.SECONDS);
      values.add(v);
    }
    ConsumerRecord<byte[], byte[]> last = input.get((chunk + 1) * CHUNK - 1);
    Map<TopicPartition, OffsetAndMetadata> offsets =
        Map.of(new TopicPartition(last.topic(), last.partition()), new OffsetAndMetadata(last.offset() + 1));
    p.sendOffsetsToTransaction(offsets, c.groupMetadata());
    if (commit) {
      p.commitTransaction();
    } else {
      p.abortTransaction();
    }
    ok((commit ? "committed" : "aborted") + " chunk " + chunk + " with its input offsets");
    return values;
  }

  /**
   * Waits until the group's committed offset of tp is want, read with
   * require_stable (KIP-447): the broker completes a transaction's offsets
   * after it answered EndTxn, and answers UNSTABLE_OFFSET_COMMIT while they
   * are pending.
   */
  static void awaitCommitted(Admin admin, String group, TopicPartition tp, long want, String what) throws Exception {
    ListConsumerGroupOffsetsOptions stable = new ListConsumerGroupOffsetsOptions().requireStable(true);
    String[] last = {""};
    Checks.await(what, () -> {
      try {
        OffsetAndMetadata o = admin.listConsumerGroupOffsets(group, stable).partitionsToOffsetAndMetadata()
            .get(60, TimeUnit.SECONDS).get(tp);
        last[0] = o == null ? "none" : String.valueOf(o.offset());
        return o != null && o.offset() == want;
      } catch (Exception e) {
        last[0] = e.toString();
        return false;
      }
    }, () -> "committed offset " + last[0] + ", want " + want);
  }

  /**
   * A transaction left open: its records are written, but a read_committed
   * consumer's end offset (the last stable offset) stays before them while
   * a read_uncommitted one's is past them; after the commit both agree.
   */
  static List<String> openTransaction(String bootstrap, Admin admin, String out, String txnId) throws Exception {
    TopicPartition tp = new TopicPartition(out, 0);
    List<String> values = new ArrayList<>();
    try (KafkaProducer<byte[], byte[]> p = txnProducer(bootstrap, txnId);
        KafkaConsumer<byte[], byte[]> committed = Records.consumer(bootstrap, "isolation.level", "read_committed");
        KafkaConsumer<byte[], byte[]> uncommitted = Records.consumer(bootstrap, "isolation.level", "read_uncommitted")) {
      p.initTransactions();
      long before = committed.endOffsets(List.of(tp)).get(tp);
      p.beginTransaction();
      for (int i = 0; i < 5; i++) {
        String v = "open-" + i;
        p.send(new ProducerRecord<>(out, 0, null, bytes(v))).get(60, TimeUnit.SECONDS);
        values.add(v);
      }
      equal(before, committed.endOffsets(List.of(tp)).get(tp), "read_committed end offset while the transaction is open");
      equal(before + 5, uncommitted.endOffsets(List.of(tp)).get(tp), "read_uncommitted end offset while the transaction is open");
      committed.assign(List.of(tp));
      committed.seek(tp, before);
      check(committed.poll(Duration.ofSeconds(1)).isEmpty(), "read_committed read records of an open transaction");
      ok("open transaction: read_committed stops at the last stable offset " + before);
      describeOpen(admin, tp, txnId, before);
      p.commitTransaction();
      // The broker writes the markers after it answered EndTxn.
      long end = before + 6;
      Checks.await("the commit marker after the 5 records", () -> uncommitted.endOffsets(List.of(tp)).get(tp) == end,
          () -> "end offset " + uncommitted.endOffsets(List.of(tp)).get(tp) + ", want " + end);
      Checks.await("the last stable offset to reach the end", () -> committed.endOffsets(List.of(tp)).get(tp) == end,
          () -> "read_committed end offset " + committed.endOffsets(List.of(tp)).get(tp));
      ok("after the commit the last stable offset is the end offset " + end);
    }
    return values;
  }

  /**
   * The open transaction as Admin sees it: listTransactions and
   * describeTransactions (Ongoing, with the partition), describeProducers
   * (the producer's transaction starts at the last stable offset).
   */
  static void describeOpen(Admin admin, TopicPartition tp, String txnId, long start) throws Exception {
    boolean listed = false;
    for (TransactionListing l : admin.listTransactions().all().get(60, TimeUnit.SECONDS)) {
      listed |= l.transactionalId().equals(txnId) && l.state() == TransactionState.ONGOING;
    }
    check(listed, "listTransactions lists " + txnId + " as Ongoing");
    TransactionDescription d = admin.describeTransactions(List.of(txnId)).description(txnId).get(60, TimeUnit.SECONDS);
    equal(TransactionState.ONGOING, d.state(), "describeTransactions state");
    equal(Set.of(tp), d.topicPartitions(), "describeTransactions partitions");
    check(d.transactionStartTimeMs().isPresent(), "describeTransactions has a start time");
    boolean found = false;
    for (ProducerState ps : admin.describeProducers(List.of(tp)).partitionResult(tp).get(60, TimeUnit.SECONDS).activeProducers()) {
      if (ps.producerId() == d.producerId()) {
        found = true;
        equal(OptionalLong.of(start), ps.currentTransactionStartOffset(), "describeProducers transaction start");
      }
    }
    check(found, "describeProducers lists producer " + d.producerId());
    ok("Admin lists and describes the open transaction and its producer");
  }

  /**
   * Admin.fenceProducers (KIP-630): the transactional id's epoch is bumped
   * and its open transaction aborted; the fenced producer's commit fails.
   */
  static void fenced(String bootstrap, Admin admin, String out, String txnId) throws Exception {
    try (KafkaProducer<byte[], byte[]> p = txnProducer(bootstrap, txnId)) {
      p.initTransactions();
      p.beginTransaction();
      for (int i = 0; i < 5; i++) {
        p.send(new ProducerRecord<>(out, i % OUT_PARTITIONS, null, bytes("fenced-" + i))).get(60, TimeUnit.SECONDS);
      }
      admin.fenceProducers(List.of(txnId)).all().get(60, TimeUnit.SECONDS);
      Checks.expectThrows(ProducerFencedException.class, "the fenced producer's commit", p::commitTransaction);
      ok("Admin.fenceProducers: the producer's commit failed with ProducerFencedException");
    }
  }

  /**
   * A zombie: a producer whose transactional.id is taken over by a newer
   * one. The newer initTransactions aborts the zombie's open transaction,
   * and the zombie's commit fails with ProducerFencedException.
   */
  static void zombie(String bootstrap, String out, String txnId) throws Exception {
    try (KafkaProducer<byte[], byte[]> old = txnProducer(bootstrap, txnId)) {
      old.initTransactions();
      old.beginTransaction();
      for (int i = 0; i < 5; i++) {
        old.send(new ProducerRecord<>(out, i % OUT_PARTITIONS, null, bytes("zombie-" + i))).get(60, TimeUnit.SECONDS);
      }
      try (KafkaProducer<byte[], byte[]> fresh = txnProducer(bootstrap, txnId)) {
        fresh.initTransactions();
        ok("a second producer with " + txnId + " initialised");
        fresh.beginTransaction();
        fresh.commitTransaction();
      }
      Checks.expectThrows(ProducerFencedException.class, "the zombie's commit", old::commitTransaction);
      ok("the zombie's commit failed with ProducerFencedException");
    }
  }

  /**
   * transaction.timeout.ms above transaction.max.timeout.ms (15 minutes):
   * the client reports the broker's INVALID_TRANSACTION_TIMEOUT as a plain
   * KafkaException with the error's text.
   */
  static void timeoutAboveMax(String bootstrap, String txnId) {
    try (KafkaProducer<byte[], byte[]> p = txnProducer(bootstrap, txnId, "transaction.timeout.ms", "900001")) {
      KafkaException e = Checks.expectThrows(KafkaException.class, "initTransactions with a timeout above the maximum", p::initTransactions);
      String want = Errors.INVALID_TRANSACTION_TIMEOUT.message();
      check(String.valueOf(e.getMessage()).contains(want), "initTransactions with a timeout above the maximum: " + e.getMessage());
      ok("initTransactions with transaction.timeout.ms above the maximum: INVALID_TRANSACTION_TIMEOUT");
    }
  }

  /**
   * Reads every output partition from the start to its end: read_committed
   * sees exactly the committed values, each once and in the order sent per
   * partition; read_uncommitted also sees the aborted, the zombie's and the
   * fenced producer's.
   */
  static void readBack(String bootstrap, String out, List<String> committedValues) throws Exception {
    Map<Integer, List<String>> want = new TreeMap<>();
    for (String v : committedValues) {
      want.computeIfAbsent(partitionOf(v), k -> new ArrayList<>()).add(v);
    }
    Map<Integer, List<String>> got = readAll(bootstrap, out, "read_committed");
    equal(want.toString(), got.toString(), "read_committed records per partition");
    ok("read_committed: the " + committedValues.size() + " committed records, nothing aborted");

    int all = 0;
    int aborted = 0;
    for (List<String> vs : readAll(bootstrap, out, "read_uncommitted").values()) {
      all += vs.size();
      aborted += (int) vs.stream().filter(v -> v.startsWith("abort-") || v.startsWith("zombie-") || v.startsWith("fenced-")).count();
    }
    equal(committedValues.size() + CHUNK + 10, all, "read_uncommitted record count");
    equal(CHUNK + 10, aborted, "read_uncommitted aborted records");
    ok("read_uncommitted: every record, aborted ones too");
  }

  /** The output partition TxnCheck sent a value to. */
  static int partitionOf(String v) {
    if (v.startsWith("open-")) {
      return 0;
    }
    int i = Integer.parseInt(v.substring(v.lastIndexOf('-') + 1));
    return i % OUT_PARTITIONS;
  }

  /** Every partition of topic from its start to its end offset. */
  static Map<Integer, List<String>> readAll(String bootstrap, String topic, String isolation) throws Exception {
    Map<Integer, List<String>> out = new TreeMap<>();
    try (KafkaConsumer<byte[], byte[]> c = Records.consumer(bootstrap, "isolation.level", isolation)) {
      List<TopicPartition> tps = new ArrayList<>();
      for (int p = 0; p < OUT_PARTITIONS; p++) {
        tps.add(new TopicPartition(topic, p));
      }
      c.assign(tps);
      c.seekToBeginning(tps);
      Map<TopicPartition, Long> ends = new HashMap<>(c.endOffsets(tps));
      Checks.await(isolation + " consumer at the end of " + topic, () -> {
        for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(200))) {
          out.computeIfAbsent(r.partition(), k -> new ArrayList<>()).add(new String(r.value(), StandardCharsets.UTF_8));
        }
        for (TopicPartition tp : tps) {
          if (c.position(tp) < ends.get(tp)) {
            return false;
          }
        }
        return true;
      }, () -> "positions below " + ends);
    }
    return out;
  }
}
