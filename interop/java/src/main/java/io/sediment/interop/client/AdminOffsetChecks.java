package io.sediment.interop.client;

import static io.sediment.interop.client.AdminCheck.get;
import static io.sediment.interop.client.Checks.equal;
import static io.sediment.interop.client.Checks.expectThrows;
import static io.sediment.interop.client.Checks.ok;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListOffsetsResult.ListOffsetsResultInfo;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.OffsetOutOfRangeException;

/** AdminClient listOffsets (every spec) and deleteRecords. */
final class AdminOffsetChecks {
  private AdminOffsetChecks() {}

  static final long T0 = Checks.RECENT;
  static final int COUNT = 10;
  /** The record with the largest timestamp, T0 + 1000, in the middle. */
  static final int MAX_AT = 5;

  static void run(Admin admin, String bootstrap, String topic) throws Exception {
    Checks.createTopic(admin, topic, 1, Map.of());
    TopicPartition tp = new TopicPartition(topic, 0);
    try (KafkaProducer<byte[], byte[]> p = Records.producer(bootstrap)) {
      for (int i = 0; i < COUNT; i++) {
        long ts = i == MAX_AT ? T0 + 1000 : T0 + i * 10L;
        p.send(new ProducerRecord<>(topic, 0, ts, null, value(i)));
      }
      p.flush();
    }
    listOffsets(admin, tp);
    deleteRecords(admin, bootstrap, tp);
  }

  static byte[] value(int i) {
    return ("record " + i).getBytes(StandardCharsets.UTF_8);
  }

  static ListOffsetsResultInfo list(Admin admin, TopicPartition tp, OffsetSpec spec) throws Exception {
    return get(admin.listOffsets(Map.of(tp, spec)).partitionResult(tp));
  }

  static void listOffsets(Admin admin, TopicPartition tp) throws Exception {
    equal(0L, list(admin, tp, OffsetSpec.earliest()).offset(), "listOffsets earliest");
    equal((long) COUNT, list(admin, tp, OffsetSpec.latest()).offset(), "listOffsets latest");
    ListOffsetsResultInfo byTime = list(admin, tp, OffsetSpec.forTimestamp(T0 + 15));
    equal(2L, byTime.offset(), "listOffsets forTimestamp(T0+15) offset");
    equal(T0 + 20, byTime.timestamp(), "listOffsets forTimestamp(T0+15) timestamp");
    equal(-1L, list(admin, tp, OffsetSpec.forTimestamp(T0 + 2000)).offset(), "listOffsets after every timestamp");
    ListOffsetsResultInfo max = list(admin, tp, OffsetSpec.maxTimestamp());
    equal((long) MAX_AT, max.offset(), "listOffsets maxTimestamp offset");
    equal(T0 + 1000, max.timestamp(), "listOffsets maxTimestamp timestamp");
    ok("listOffsets earliest, latest, forTimestamp (found, after the last), maxTimestamp");
  }

  static void deleteRecords(Admin admin, String bootstrap, TopicPartition tp) throws Exception {
    long low = get(admin.deleteRecords(Map.of(tp, RecordsToDelete.beforeOffset(4))).lowWatermarks().get(tp)).lowWatermark();
    equal(4L, low, "deleteRecords(4) low watermark");
    equal(4L, list(admin, tp, OffsetSpec.earliest()).offset(), "listOffsets earliest after deleteRecords(4)");
    List<ConsumerRecord<byte[], byte[]>> got = Records.read(bootstrap, tp, 0, COUNT - 4,
        "auto.offset.reset", "earliest");
    equal(4L, got.get(0).offset(), "first offset read from 0 (reset to the log start) after deleteRecords(4)");
    for (ConsumerRecord<byte[], byte[]> r : got) {
      equal(value((int) r.offset()), r.value(), "record " + r.offset() + " after deleteRecords");
    }
    expectThrows(OffsetOutOfRangeException.class, "deleteRecords beyond the high watermark",
        () -> get(admin.deleteRecords(Map.of(tp, RecordsToDelete.beforeOffset(COUNT + 1))).all()));
    low = get(admin.deleteRecords(Map.of(tp, RecordsToDelete.beforeOffset(-1))).lowWatermarks().get(tp)).lowWatermark();
    equal((long) COUNT, low, "deleteRecords(-1: the high watermark) low watermark");
    equal((long) COUNT, list(admin, tp, OffsetSpec.earliest()).offset(), "listOffsets earliest after deleting everything");
    equal((long) COUNT, list(admin, tp, OffsetSpec.latest()).offset(), "listOffsets latest after deleting everything");
    ok("deleteRecords(4) and (-1: high watermark), read back from the new start; beyond it: OffsetOutOfRange");
  }
}
