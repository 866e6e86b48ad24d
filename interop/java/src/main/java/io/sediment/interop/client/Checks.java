package io.sediment.interop.client;

import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;
import java.util.Random;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Header;

/**
 * What every check program shares: failing with a clear message, expecting
 * an exact exception class, creating topics and comparing records byte for
 * byte. A failed check throws {@link CheckFailed}; {@link #run} prints it
 * and exits non-zero, so the Go test shows the first mismatch.
 */
final class Checks {
  private Checks() {}

  /**
   * A timestamp an hour ago, whole seconds, for records sent with explicit
   * timestamps: recent enough that no retention (7 days by default) deletes
   * them while a check runs.
   */
  static final long RECENT = System.currentTimeMillis() / 1000 * 1000 - 3_600_000;

  /** A mismatch between what Sediment did and what the Java client expects. */
  static final class CheckFailed extends RuntimeException {
    CheckFailed(String msg) {
      super(msg);
    }
  }

  /** A step of a check that may throw anything. */
  interface Step {
    void run() throws Exception;
  }

  /** Runs main's body: exit 0 when every check passed, 1 on the first failure. */
  static void run(String program, String[] args, int want, Step body) {
    if (args.length != want) {
      System.err.println(program + ": want " + want + " arguments (bootstrap address, topic prefix)");
      System.exit(2);
    }
    try {
      body.run();
    } catch (CheckFailed e) {
      System.err.println(program + ": CHECK FAILED: " + e.getMessage());
      System.exit(1);
    } catch (Throwable e) {
      System.err.println(program + ": CHECK FAILED with an unexpected exception:");
      e.printStackTrace();
      System.exit(1);
    }
    System.out.println(program + ": all checks passed");
    System.exit(0);
  }

  static void ok(String what) {
    System.out.println("ok  " + what);
  }

  static CheckFailed fail(String msg) {
    return new CheckFailed(msg);
  }

  static void check(boolean cond, String msg) {
    if (!cond) {
      throw fail(msg);
    }
  }

  static void equal(Object want, Object got, String what) {
    if (!Objects.deepEquals(want, got)) {
      throw fail(what + ": want " + show(want) + ", got " + show(got));
    }
  }

  private static String show(Object o) {
    if (o instanceof byte[] b) {
      return b.length <= 32 ? Arrays.toString(b) : "byte[" + b.length + "]";
    }
    return String.valueOf(o);
  }

  /**
   * Runs step and requires it to fail with exactly the exception class
   * want (itself or as the cause of an ExecutionException, as admin and
   * producer futures report errors).
   */
  static <T extends Throwable> T expectThrows(Class<T> want, String what, Step step) {
    try {
      step.run();
    } catch (Throwable e) {
      Throwable got = e instanceof ExecutionException && e.getCause() != null ? e.getCause() : e;
      if (got.getClass() != want) {
        throw fail(what + ": want " + want.getName() + ", got " + got.getClass().getName() + ": " + got.getMessage());
      }
      return want.cast(got);
    }
    throw fail(what + ": want " + want.getName() + ", got success");
  }

  /**
   * Waits up to 90 seconds for cond, then fails with what and state's
   * description of what was seen.
   */
  static void await(String what, java.util.function.BooleanSupplier cond, java.util.function.Supplier<String> state)
      throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
    while (!cond.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw fail("after 90 s still waiting for " + what + ": " + state.get());
      }
      Thread.sleep(100);
    }
  }

  static Admin admin(String bootstrap) {
    Properties p = new Properties();
    p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 60000);
    return Admin.create(p);
  }

  /** Creates topic with partitions partitions and the given configs. */
  static void createTopic(Admin admin, String topic, int partitions, Map<String, String> configs)
      throws Exception {
    NewTopic nt = new NewTopic(topic, partitions, (short) 1).configs(configs);
    admin.createTopics(List.of(nt)).all().get(60, TimeUnit.SECONDS);
    awaitTopic(admin, topic, partitions);
  }

  /**
   * Waits until topic is described with partitions partitions: Apache
   * Kafka answers CreateTopics and CreatePartitions once its controller
   * committed them, a moment before the broker's metadata has them.
   */
  static void awaitTopic(Admin admin, String topic, int partitions) throws InterruptedException {
    String[] last = {""};
    await(topic + " described with " + partitions + " partitions", () -> {
      try {
        int n = admin.describeTopics(List.of(topic)).allTopicNames().get(60, TimeUnit.SECONDS).get(topic).partitions().size();
        last[0] = n + " partitions";
        return n == partitions;
      } catch (Exception e) {
        last[0] = e.toString();
        return false;
      }
    }, () -> "last seen " + last[0]);
  }

  static Map<String, String> configs(String... kv) {
    Map<String, String> m = new HashMap<>();
    for (int i = 0; i + 1 < kv.length; i += 2) {
      m.put(kv[i], kv[i + 1]);
    }
    return m;
  }

  /** Deterministic pseudo-random bytes, so every run sends the same data. */
  static byte[] bytes(Random rnd, int n) {
    byte[] b = new byte[n];
    rnd.nextBytes(b);
    return b;
  }

  /** Requires got to carry exactly want's key, value, headers and timestamp. */
  static void sameRecord(Sent want, ConsumerRecord<byte[], byte[]> got, String what) {
    equal(want.key, got.key(), what + " key");
    equal(want.value, got.value(), what + " value");
    if (want.timestamp != null) {
      equal(want.timestamp, got.timestamp(), what + " timestamp");
    }
    Header[] gh = got.headers().toArray();
    equal(want.headers.length, gh.length, what + " header count");
    for (int i = 0; i < gh.length; i++) {
      equal(want.headers[i].key(), gh[i].key(), what + " header " + i + " key");
      equal(want.headers[i].value(), gh[i].value(), what + " header " + i + " value");
    }
  }

  /** One record as it was sent. */
  static final class Sent {
    final byte[] key;
    final byte[] value;
    final Header[] headers;
    final Long timestamp;

    Sent(byte[] key, byte[] value, Header[] headers, Long timestamp) {
      this.key = key;
      this.value = value;
      this.headers = headers;
      this.timestamp = timestamp;
    }
  }
}
