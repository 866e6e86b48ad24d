package io.sediment.interop.client;

import static io.sediment.interop.client.AdminCheck.get;
import static io.sediment.interop.client.Checks.check;
import static io.sediment.interop.client.Checks.equal;
import static io.sediment.interop.client.Checks.expectThrows;
import static io.sediment.interop.client.Checks.ok;

import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.clients.admin.ListGroupsOptions;
import org.apache.kafka.clients.admin.MemberDescription;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.GroupState;
import org.apache.kafka.common.GroupType;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.GroupIdNotFoundException;
import org.apache.kafka.common.errors.GroupNotEmptyException;
import org.apache.kafka.common.errors.GroupSubscribedToTopicException;
import org.apache.kafka.common.errors.UnknownMemberIdException;

/**
 * AdminClient on consumer groups: list, describe, list/alter/delete
 * offsets and delete, first while a member is active (each refusal with
 * its exact exception), then once it left.
 */
final class AdminGroupChecks {
  private AdminGroupChecks() {}

  static final int PER_PARTITION = 10;

  static void run(Admin admin, String bootstrap, String prefix) throws Exception {
    String topic = prefix + "-grouped";
    String group = prefix + "-group";
    Checks.createTopic(admin, topic, 2, Map.of());
    try (KafkaProducer<byte[], byte[]> p = Records.producer(bootstrap)) {
      for (int i = 0; i < 2 * PER_PARTITION; i++) {
        p.send(new ProducerRecord<>(topic, i % 2, null, new byte[] {(byte) i}));
      }
      p.flush();
    }
    TopicPartition p0 = new TopicPartition(topic, 0);
    TopicPartition p1 = new TopicPartition(topic, 1);
    try (Member m = new Member(group, bootstrap, topic, "group.id", group, "client.id", "admin-check-member")) {
      Checks.await(group + ": the member owns both partitions and read every record",
          () -> m.owned().size() == 2 && m.received.size() == 2 * PER_PARTITION,
          () -> m.owned() + " " + m.received.size() + " " + m.events());
      Checks.await(group + ": offsets committed up to the end", () -> {
        try {
          return offsets(admin, group).equals(Map.of(p0, (long) PER_PARTITION, p1, (long) PER_PARTITION));
        } catch (Exception e) {
          throw new RuntimeException(e);
        }
      }, () -> "");
      active(admin, group, p0, p1);
    }
    empty(admin, group, p0, p1);
  }

  /** The group while its one member is active. */
  static void active(Admin admin, String group, TopicPartition p0, TopicPartition p1) throws Exception {
    GroupListing listing = listing(admin, group);
    check(listing != null, "listGroups does not name " + group);
    equal(Optional.of(GroupState.STABLE), listing.groupState(), "listed state");
    equal(Optional.of(GroupType.CLASSIC), listing.type(), "listed type");
    equal("consumer", listing.protocol(), "listed protocol type");
    ConsumerGroupDescription d = describe(admin, group);
    equal(GroupState.STABLE, d.groupState(), "described state");
    equal(GroupType.CLASSIC, d.type(), "described type");
    equal("range", d.partitionAssignor(), "described assignor");
    equal(false, d.isSimpleConsumerGroup(), "described isSimpleConsumerGroup");
    equal(1, d.members().size(), "described members");
    MemberDescription md = d.members().iterator().next();
    equal("admin-check-member", md.clientId(), "member client id");
    equal(Set.of(p0, p1), md.assignment().topicPartitions(), "member assignment");
    equal(get(admin.describeCluster().nodes()).iterator().next(), d.coordinator(), "coordinator");
    ok("listGroups and describeConsumerGroups of an active classic group (state, type, assignor, member, assignment)");

    expectThrows(UnknownMemberIdException.class, "alterConsumerGroupOffsets of a group with an active member",
        () -> get(admin.alterConsumerGroupOffsets(group, Map.of(p0, new OffsetAndMetadata(1))).all()));
    expectThrows(GroupSubscribedToTopicException.class, "deleteConsumerGroupOffsets of a subscribed topic",
        () -> get(admin.deleteConsumerGroupOffsets(group, Set.of(p0)).all()));
    expectThrows(GroupNotEmptyException.class, "deleteConsumerGroups of a group with an active member",
        () -> get(admin.deleteConsumerGroups(List.of(group)).all()));
    equal(Map.of(p0, (long) PER_PARTITION, p1, (long) PER_PARTITION), offsets(admin, group), "offsets after the refusals");
    ok("active group: alter offsets UnknownMemberId, delete offsets GroupSubscribedToTopic, delete GroupNotEmpty; offsets unchanged");
  }

  /** The group once its member left: offsets altered, deleted, then the group. */
  static void empty(Admin admin, String group, TopicPartition p0, TopicPartition p1) throws Exception {
    ConsumerGroupDescription d = describe(admin, group);
    equal(GroupState.EMPTY, d.groupState(), "state after the member left");
    equal(0, d.members().size(), "members after the member left");
    get(admin.alterConsumerGroupOffsets(group, Map.of(p0, new OffsetAndMetadata(3, "from admin"))).all());
    Map<TopicPartition, OffsetAndMetadata> got = get(admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata());
    equal(3L, got.get(p0).offset(), "p0 after alterConsumerGroupOffsets");
    equal("from admin", got.get(p0).metadata(), "p0 metadata after alterConsumerGroupOffsets");
    equal((long) PER_PARTITION, got.get(p1).offset(), "p1 after altering p0");
    get(admin.deleteConsumerGroupOffsets(group, Set.of(p1)).all());
    equal(Map.of(p0, 3L), offsets(admin, group), "offsets after deleteConsumerGroupOffsets(p1)");
    ok("empty group: alterConsumerGroupOffsets with metadata, deleteConsumerGroupOffsets");

    get(admin.deleteConsumerGroups(List.of(group)).all());
    check(listing(admin, group) == null, "listGroups still names the deleted group");
    expectThrows(GroupIdNotFoundException.class, "deleteConsumerGroups of a deleted group",
        () -> get(admin.deleteConsumerGroups(List.of(group)).all()));
    expectThrows(GroupIdNotFoundException.class, "describeConsumerGroups of a deleted group",
        () -> describe(admin, group));
    equal(Map.of(), offsets(admin, group), "offsets of a deleted group");
    ok("deleteConsumerGroups; again and describe: GroupIdNotFoundException; no offsets left");
  }

  static GroupListing listing(Admin admin, String group) throws Exception {
    Collection<GroupListing> all = get(admin.listGroups(ListGroupsOptions.forConsumerGroups()).all());
    return all.stream().filter(g -> g.groupId().equals(group)).findFirst().orElse(null);
  }

  static ConsumerGroupDescription describe(Admin admin, String group) throws Exception {
    return get(admin.describeConsumerGroups(List.of(group)).describedGroups().get(group));
  }

  static Map<TopicPartition, Long> offsets(Admin admin, String group) throws Exception {
    Map<TopicPartition, Long> out = new HashMap<>();
    get(admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata())
        .forEach((tp, om) -> out.put(tp, om == null ? -1 : om.offset()));
    return out;
  }
}
