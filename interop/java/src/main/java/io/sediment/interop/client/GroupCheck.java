package io.sediment.interop.client;

import static io.sediment.interop.client.Checks.check;
import static io.sediment.interop.client.Checks.equal;
import static io.sediment.interop.client.Checks.ok;

import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.clients.admin.Admin;

/**
 * KafkaConsumer in groups of the classic protocol: every assignor of the
 * Java client (range, roundrobin, sticky, cooperative-sticky) and static
 * membership. Every record is compared byte for byte.
 *
 * <p>Usage: GroupCheck BOOTSTRAP PREFIX. It creates PREFIX-data (as
 * ConsumerCheck does) and groups named PREFIX-*.
 */
public final class GroupCheck {
  private GroupCheck() {}

  public static void main(String[] args) {
    Checks.run("GroupCheck", args, 2, () -> {
      String bootstrap = args[0];
      String prefix = args[1];
      String data = prefix + "-data";
      try (Admin admin = Checks.admin(bootstrap)) {
        Checks.createTopic(admin, data, ConsumerCheck.PARTITIONS, Map.of());
      }
      ConsumerCheck.produce(bootstrap, data, null);
      assignors(bootstrap, data, prefix);
      staticMembership(bootstrap, data, prefix + "-static");
    });
  }

  static final Map<String, String> ASSIGNORS = Map.of(
      "range", "org.apache.kafka.clients.consumer.RangeAssignor",
      "roundrobin", "org.apache.kafka.clients.consumer.RoundRobinAssignor",
      "sticky", "org.apache.kafka.clients.consumer.StickyAssignor",
      "cooperative-sticky", "org.apache.kafka.clients.consumer.CooperativeStickyAssignor");

  static final Set<Integer> ALL = new java.util.TreeSet<>(Set.of(0, 1, 2, 3));

  static void assignors(String bootstrap, String data, String prefix) throws Exception {
    for (String name : List.of("range", "roundrobin", "sticky", "cooperative-sticky")) {
      assignor(bootstrap, data, prefix + "-" + name, name);
    }
  }

  /**
   * A consumes everything alone, then B joins: the partitions are split two
   * and two in the assignor's pattern (the eager ones revoke all of A's
   * partitions, cooperative-sticky only the two that move), and B reads
   * nothing because A committed everything it read.
   */
  static void assignor(String bootstrap, String data, String group, String name) throws Exception {
    String[] cfg = {"group.id", group, "partition.assignment.strategy", ASSIGNORS.get(name)};
    try (Member a = new Member(group + "/A", bootstrap, data, cfg)) {
      Checks.await(group + ": A owns every partition and read every record",
          () -> a.owned().equals(ALL) && a.received.size() == ConsumerCheck.PARTITIONS * ConsumerCheck.PER_PARTITION,
          () -> "A owns " + a.owned() + ", read " + a.received.size());
      try (Member b = new Member(group + "/B", bootstrap, data, cfg)) {
        Checks.await(group + ": two partitions each", () -> split(a.owned(), b.owned()),
            () -> "A " + a.owned() + " " + a.events() + ", B " + b.owned() + " " + b.events());
        Set<Integer> ao = a.owned();
        switch (name) {
          case "range" -> check(ao.equals(Set.of(0, 1)) || ao.equals(Set.of(2, 3)), group + ": range gave A " + ao);
          case "roundrobin" -> check(ao.equals(Set.of(0, 2)) || ao.equals(Set.of(1, 3)), group + ": roundrobin gave A " + ao);
          default -> { }
        }
        List<String> ev = a.events();
        if (name.equals("cooperative-sticky")) {
          check(!ev.contains("revoked " + ALL), group + ": a cooperative rebalance revoked all of A's partitions: " + ev);
          check(ev.contains("revoked " + b.owned()), group + ": A never revoked exactly B's partitions: " + ev);
        } else {
          check(ev.contains("revoked " + ALL), group + ": an eager rebalance did not revoke all of A's partitions: " + ev);
        }
        check(b.received.isEmpty(), group + ": B read " + b.received.size() + " records A had committed");
        equal(0, a.duplicates, group + ": records A read twice");
        for (Map.Entry<String, byte[]> e : a.received.entrySet()) {
          String[] po = e.getKey().split("@");
          equal(ConsumerCheck.value(Integer.parseInt(po[0]), Integer.parseInt(po[1])), e.getValue(), group + " " + e.getKey());
        }
      }
    }
    ok("classic group, assignor " + name + ": one member reads all, a second joins, two partitions each, no record read twice");
  }

  private static boolean split(Set<Integer> a, Set<Integer> b) {
    Set<Integer> union = new HashSet<>(a);
    union.addAll(b);
    return a.size() == 2 && b.size() == 2 && union.equals(ALL);
  }

  /**
   * Two static members (group.instance.id) split the topic; one restarts
   * with the same instance id and gets its partitions back at the same
   * generation: the other member sees no rebalance.
   */
  static void staticMembership(String bootstrap, String data, String group) throws Exception {
    String range = ASSIGNORS.get("range");
    String[] s1cfg = {"group.id", group, "group.instance.id", "s1", "partition.assignment.strategy", range};
    String[] s2cfg = {"group.id", group, "group.instance.id", "s2", "partition.assignment.strategy", range};
    int total = ConsumerCheck.PARTITIONS * ConsumerCheck.PER_PARTITION;
    try (Member s1 = new Member(group + "/s1", bootstrap, data, s1cfg)) {
      Member s2 = new Member(group + "/s2", bootstrap, data, s2cfg);
      Checks.await(group + ": two static members, two partitions each, every record read",
          () -> split(s1.owned(), s2.owned()) && s1.generation() > 0 && s1.generation() == s2.generation()
              && s1.received.size() + s2.received.size() == total,
          () -> "s1 " + s1.owned() + " gen " + s1.generation() + " " + s1.events()
              + ", s2 " + s2.owned() + " gen " + s2.generation() + " " + s2.events());
      int generation = s1.generation();
      List<String> s1Events = s1.events();
      Set<Integer> s2Owned = s2.owned();
      s2.close();
      try (Member again = new Member(group + "/s2-restarted", bootstrap, data, s2cfg)) {
        Checks.await(group + ": the restarted s2 owns partitions",
            () -> !again.owned().isEmpty() && again.generation() > 0,
            () -> "restarted s2 " + again.owned() + " gen " + again.generation() + " " + again.events()
                + "; s1 " + s1.owned() + " " + s1.events());
        equal(s2Owned, again.owned(), group + ": partitions of the restarted static member");
        equal(generation, again.generation(), group + ": generation after the static member's restart");
        equal(generation, s1.generation(), group + ": generation of the member that stayed");
        equal(s1Events, s1.events(), group + ": rebalance callbacks of the member that stayed");
        equal(s1.owned().size(), 2, group + ": partitions of the member that stayed");
        check(again.received.isEmpty(), group + ": the restarted member read " + again.received.size() + " committed records");
      }
    }
    ok("static membership: a restarted member gets its partitions back at the same generation, no rebalance");
  }
}
