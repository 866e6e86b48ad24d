package io.sediment.interop.streams;

import java.time.Duration;
import java.util.Arrays;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.CloseOptions;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.processor.StateRestoreListener;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * The Kafka Streams word count the Go interop test drives against Sediment:
 * lines of text in, one running count per word out. {@code groupBy} makes a
 * repartition topic ({@code APPID-words-repartition}); {@code count} keeps
 * the counts in a persistent RocksDB store ({@code counts}) backed by its
 * changelog topic ({@code APPID-counts-changelog}), from which a restart with
 * an empty state dir restores them.
 *
 * <p>Usage: {@code WordCount BOOTSTRAP APPLICATION_ID INPUT OUTPUT STATE_DIR
 * [GUARANTEE]}, GUARANTEE being {@code at_least_once} (the default) or
 * {@code exactly_once_v2}. It runs until the JVM is told to stop (SIGTERM):
 * the shutdown hook closes the Streams client, which commits what it
 * processed, so a stop between two runs loses and repeats nothing even with
 * at_least_once. With exactly_once_v2 every commit is a transaction, and a
 * SIGKILL loses and repeats nothing either.
 *
 * <p>It prints one line per event the test watches, on stdout: {@code STATE
 * BEFORE->NOW} at every state change, {@code RESTORING CHANGELOG-PARTITION
 * STORE START END} and {@code RESTORED CHANGELOG-PARTITION STORE RECORDS} for
 * every restore, {@code FAILED EXCEPTION} when a stream thread dies, and
 * {@code CLOSED} once the shutdown hook's close has finished.
 */
public final class WordCount {
    private WordCount() {}

    public static void main(String[] args) throws InterruptedException {
        if (args.length != 5 && args.length != 6) {
            System.err.println("usage: WordCount BOOTSTRAP APPLICATION_ID INPUT OUTPUT STATE_DIR [GUARANTEE]");
            System.exit(2);
        }
        String guarantee = args.length == 6 ? args[5] : StreamsConfig.AT_LEAST_ONCE;
        KafkaStreams streams = new KafkaStreams(topology(args[2], args[3]), config(args[0], args[1], args[4], guarantee));
        CountDownLatch closed = new CountDownLatch(1);
        streams.setStateListener((now, before) -> say("STATE " + before + "->" + now));
        streams.setGlobalStateRestoreListener(new RestoreReport());
        streams.setUncaughtExceptionHandler(e -> {
            say("FAILED " + e);
            return StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
        });
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            // Leave the group, as a scale-down would: a Streams client
            // otherwise stays a member until its session times out, and the
            // next run waits for that in its first rebalance.
            boolean done = streams.close(CloseOptions
                .groupMembershipOperation(CloseOptions.GroupMembershipOperation.LEAVE_GROUP)
                .withTimeout(Duration.ofSeconds(60)));
            say(done ? "CLOSED" : "CLOSE TIMED OUT");
            closed.countDown();
        }, "wordcount-shutdown"));
        streams.start();
        closed.await();
    }

    static Topology topology(String input, String output) {
        StreamsBuilder builder = new StreamsBuilder();
        builder.stream(input, Consumed.with(Serdes.String(), Serdes.String()))
            .flatMapValues(line -> Arrays.asList(line.toLowerCase(Locale.ROOT).split("\\W+")))
            .filter((key, word) -> !word.isEmpty())
            .groupBy((key, word) -> word, Grouped.with("words", Serdes.String(), Serdes.String()))
            .count(Materialized.<String, Long, KeyValueStore<Bytes, byte[]>>as("counts")
                .withKeySerde(Serdes.String())
                .withValueSerde(Serdes.Long())
                .withLoggingEnabled(changelogConfig()))
            .toStream()
            .to(output, Produced.with(Serdes.String(), Serdes.Long()));
        return builder.build();
    }

    /**
     * The changelog's topic configs. Streams makes a key-value changelog
     * compacted; Sediment does not compact yet (issue 22), so the changelog
     * is a plain delete-policy topic that keeps every record forever, which
     * restores the same counts (it only replays more of them).
     */
    static Map<String, String> changelogConfig() {
        return Map.of(
            TopicConfig.CLEANUP_POLICY_CONFIG, TopicConfig.CLEANUP_POLICY_DELETE,
            TopicConfig.RETENTION_MS_CONFIG, "-1");
    }

    static Properties config(String bootstrap, String applicationId, String stateDir, String guarantee) {
        Properties p = new Properties();
        p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(StreamsConfig.APPLICATION_ID_CONFIG, applicationId);
        p.put(StreamsConfig.STATE_DIR_CONFIG, stateDir);
        p.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, guarantee);
        p.put(StreamsConfig.REPLICATION_FACTOR_CONFIG, 1);
        p.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, 1);
        p.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, 200);
        p.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, 0);
        // Purge consumed repartition records (DeleteRecords) after every
        // commit rather than every 30 s, so that a short run does it too.
        p.put(StreamsConfig.REPARTITION_PURGE_INTERVAL_MS_CONFIG, 200);
        p.put(StreamsConfig.consumerPrefix(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG), "earliest");
        return p;
    }

    static void say(String line) {
        System.out.println(line);
        System.out.flush();
    }

    /** Reports what each restore of the store read from its changelog. */
    static final class RestoreReport implements StateRestoreListener {
        @Override
        public void onRestoreStart(TopicPartition tp, String store, long start, long end) {
            say("RESTORING " + tp + " " + store + " " + start + " " + end);
        }

        @Override
        public void onBatchRestored(TopicPartition tp, String store, long batchEnd, long records) {}

        @Override
        public void onRestoreEnd(TopicPartition tp, String store, long total) {
            say("RESTORED " + tp + " " + store + " " + total);
        }
    }
}
