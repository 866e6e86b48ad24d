package io.sediment.interop.client;

import static io.sediment.interop.client.Checks.check;
import static io.sediment.interop.client.Checks.equal;
import static io.sediment.interop.client.Checks.expectThrows;
import static io.sediment.interop.client.Checks.ok;

import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.CreateTopicsOptions;
import org.apache.kafka.clients.admin.CreateTopicsResult;
import org.apache.kafka.clients.admin.DescribeClusterResult;
import org.apache.kafka.clients.admin.DescribeConfigsOptions;
import org.apache.kafka.clients.admin.DescribeTopicsOptions;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicCollection;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.InvalidConfigurationException;
import org.apache.kafka.common.errors.InvalidPartitionsException;
import org.apache.kafka.common.errors.InvalidTopicException;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.errors.UnknownTopicIdException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;

/**
 * AdminClient against a broker: topics (create, its errors, describe by
 * name and by id, list, create partitions, delete), configs (describe,
 * incremental alter, their errors), describeCluster, and in
 * {@link AdminOffsetChecks} and {@link AdminGroupChecks} listOffsets,
 * deleteRecords and consumer groups.
 *
 * <p>Usage: AdminCheck BOOTSTRAP PREFIX. Every topic and group it makes is
 * named PREFIX-*.
 */
public final class AdminCheck {
  private AdminCheck() {}

  public static void main(String[] args) {
    Checks.run("AdminCheck", args, 2, () -> {
      String bootstrap = args[0];
      String prefix = args[1];
      try (Admin admin = Checks.admin(bootstrap)) {
        Node node = cluster(admin, bootstrap);
        topics(admin, prefix, node);
        configs(admin, prefix + "-topic", node);
        brokerDefault(admin, prefix + "-second", node);
        AdminOffsetChecks.run(admin, bootstrap, prefix + "-offsets");
        AdminGroupChecks.run(admin, bootstrap, prefix);
        deleteTopics(admin, prefix);
      }
    });
  }

  static <T> T get(org.apache.kafka.common.KafkaFuture<T> f) throws Exception {
    return f.get(60, TimeUnit.SECONDS);
  }

  /** describeCluster: one node, the one the client bootstrapped from. */
  static Node cluster(Admin admin, String bootstrap) throws Exception {
    DescribeClusterResult r = admin.describeCluster();
    Collection<Node> nodes = get(r.nodes());
    equal(1, nodes.size(), "describeCluster nodes");
    Node node = nodes.iterator().next();
    equal(bootstrap, node.host() + ":" + node.port(), "the node's address");
    String id = get(r.clusterId());
    check(id != null && !id.isEmpty(), "describeCluster: no cluster id");
    Node controller = get(r.controller());
    check(controller != null, "describeCluster: no controller");
    ok("describeCluster: cluster " + id + ", node " + node.id() + " at " + bootstrap);
    return node;
  }

  static void topics(Admin admin, String prefix, Node node) throws Exception {
    String topic = prefix + "-topic";
    CreateTopicsResult cr = admin.createTopics(List.of(new NewTopic(topic, 3, (short) 1)
        .configs(Map.of("retention.ms", "3600000", "max.message.bytes", "500000"))));
    get(cr.all());
    Checks.awaitTopic(admin, topic, 3);
    equal(3, get(cr.numPartitions(topic)), "createTopics numPartitions");
    equal(1, get(cr.replicationFactor(topic)), "createTopics replicationFactor");
    equal("3600000", get(cr.config(topic)).get("retention.ms").value(), "createTopics config retention.ms");
    Uuid id = get(cr.topicId(topic));
    check(id != null && !id.equals(Uuid.ZERO_UUID), "createTopics: no topic id");
    ok("createTopics: partitions, replication factor, configs and topic id in the answer");

    createErrors(admin, prefix, topic);

    TopicDescription byName = get(admin.describeTopics(List.of(topic)).allTopicNames()).get(topic);
    describedAs(byName, topic, id, 3, node);
    TopicDescription byId = get(admin.describeTopics(TopicCollection.ofTopicIds(List.of(id))).allTopicIds()).get(id);
    describedAs(byId, topic, id, 3, node);
    expectThrows(UnknownTopicOrPartitionException.class, "describeTopics of an unknown topic",
        () -> get(admin.describeTopics(List.of(prefix + "-nope")).allTopicNames()));
    expectThrows(UnknownTopicIdException.class, "describeTopics of an unknown topic id",
        () -> get(admin.describeTopics(TopicCollection.ofTopicIds(List.of(Uuid.randomUuid()))).allTopicIds()));
    check(get(admin.listTopics().names()).contains(topic), "listTopics does not name " + topic);
    ok("describeTopics by name and by id (leader, replicas, ISR), listTopics; unknown: UnknownTopicOrPartition/UnknownTopicId");

    get(admin.createPartitions(Map.of(topic, NewPartitions.increaseTo(5))).all());
    Checks.awaitTopic(admin, topic, 5);
    equal(5, get(admin.describeTopics(List.of(topic)).allTopicNames()).get(topic).partitions().size(),
        "partitions after createPartitions(5)");
    expectThrows(InvalidPartitionsException.class, "createPartitions to fewer partitions",
        () -> get(admin.createPartitions(Map.of(topic, NewPartitions.increaseTo(2))).all()));
    expectThrows(InvalidPartitionsException.class, "createPartitions to the same count",
        () -> get(admin.createPartitions(Map.of(topic, NewPartitions.increaseTo(5))).all()));
    expectThrows(UnknownTopicOrPartitionException.class, "createPartitions of an unknown topic",
        () -> get(admin.createPartitions(Map.of(prefix + "-nope", NewPartitions.increaseTo(5))).all()));
    ok("createPartitions 3 -> 5; fewer or the same: InvalidPartitionsException; unknown topic: UnknownTopicOrPartitionException");

    String second = prefix + "-second";
    Uuid secondId = get(admin.createTopics(List.of(new NewTopic(second, 3, (short) 1))).topicId(second));
    Checks.awaitTopic(admin, second, 3);
    Map<String, TopicDescription> paged = get(admin.describeTopics(List.of(topic, second),
        new DescribeTopicsOptions().partitionSizeLimitPerResponse(2)).allTopicNames());
    describedAs(paged.get(topic), topic, id, 5, node);
    describedAs(paged.get(second), second, secondId, 3, node);
    ok("describeTopics two topics (5 and 3 partitions) two partitions per response");
  }

  /** The errors createTopics provokes, each with its exact exception. */
  static void createErrors(Admin admin, String prefix, String topic) throws Exception {
    expectThrows(TopicExistsException.class, "createTopics of an existing topic",
        () -> get(admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all()));
    expectThrows(InvalidConfigurationException.class, "createTopics with retention.ms=abc",
        () -> get(admin.createTopics(List.of(new NewTopic(prefix + "-badvalue", 1, (short) 1)
            .configs(Map.of("retention.ms", "abc")))).all()));
    expectThrows(InvalidConfigurationException.class, "createTopics with an unknown config",
        () -> get(admin.createTopics(List.of(new NewTopic(prefix + "-badname", 1, (short) 1)
            .configs(Map.of("no.such.config", "1")))).all()));
    expectThrows(InvalidPartitionsException.class, "createTopics with 0 partitions",
        () -> get(admin.createTopics(List.of(new NewTopic(prefix + "-zero", 0, (short) 1))).all()));
    expectThrows(InvalidTopicException.class, "createTopics of a topic named bad/name",
        () -> get(admin.createTopics(List.of(new NewTopic("bad/name", 1, (short) 1))).all()));
    String checked = prefix + "-validate-only";
    get(admin.createTopics(List.of(new NewTopic(checked, 1, (short) 1)), new CreateTopicsOptions().validateOnly(true)).all());
    check(!get(admin.listTopics().names()).contains(checked), "validateOnly created " + checked);
    for (String t : List.of(prefix + "-badvalue", prefix + "-badname", prefix + "-zero")) {
      check(!get(admin.listTopics().names()).contains(t), "a refused createTopics created " + t);
    }
    ok("createTopics: duplicate TopicExists, bad value and unknown config InvalidConfiguration, "
        + "0 partitions InvalidPartitions, bad name InvalidTopic, validateOnly creates nothing");
  }

  static void describedAs(TopicDescription d, String topic, Uuid id, int partitions, Node node) {
    equal(topic, d.name(), "described name");
    equal(id, d.topicId(), "described topic id");
    equal(false, d.isInternal(), "described isInternal");
    equal(partitions, d.partitions().size(), "described partitions");
    for (int i = 0; i < partitions; i++) {
      TopicPartitionInfo p = d.partitions().get(i);
      equal(i, p.partition(), "partition index");
      equal(node, p.leader(), "partition " + i + " leader");
      equal(List.of(node), p.replicas(), "partition " + i + " replicas");
      equal(List.of(node), p.isr(), "partition " + i + " ISR");
    }
  }

  /** describeConfigs and incrementalAlterConfigs of a topic and the broker. */
  static void configs(Admin admin, String topic, Node node) throws Exception {
    ConfigResource res = new ConfigResource(ConfigResource.Type.TOPIC, topic);
    Config cfg = describe(admin, res);
    ConfigEntry retention = cfg.get("retention.ms");
    equal("3600000", retention.value(), "retention.ms");
    equal(ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG, retention.source(), "retention.ms source");
    equal(ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG, retention.synonyms().get(0).source(), "retention.ms first synonym");
    List<ConfigEntry.ConfigSynonym> mmb = cfg.get("max.message.bytes").synonyms();
    equal(2, mmb.size(), "max.message.bytes synonyms");
    equal(List.of("max.message.bytes", "500000", ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG),
        List.of(mmb.get(0).name(), mmb.get(0).value(), mmb.get(0).source()), "max.message.bytes first synonym");
    equal(List.of("message.max.bytes", "1048588", ConfigEntry.ConfigSource.DEFAULT_CONFIG),
        List.of(mmb.get(1).name(), mmb.get(1).value(), mmb.get(1).source()), "max.message.bytes broker synonym");
    ConfigEntry policy = cfg.get("cleanup.policy");
    equal("delete", policy.value(), "cleanup.policy");
    equal(ConfigEntry.ConfigSource.DEFAULT_CONFIG, policy.source(), "cleanup.policy source");
    equal(true, policy.isDefault(), "cleanup.policy isDefault");
    expectThrows(UnknownTopicOrPartitionException.class, "describeConfigs of an unknown topic",
        () -> describe(admin, new ConfigResource(ConfigResource.Type.TOPIC, topic + "-nope")));
    Config broker = describe(admin, new ConfigResource(ConfigResource.Type.BROKER, String.valueOf(node.id())));
    check(broker.get("log.retention.ms") != null || broker.get("log.retention.hours") != null,
        "the broker's configs have no log retention: " + broker.entries().size() + " entries");
    ok("describeConfigs: values, sources and synonyms of a topic; the broker's; unknown topic: UnknownTopicOrPartition");

    get(admin.incrementalAlterConfigs(Map.of(res, List.of(
        new AlterConfigOp(new ConfigEntry("retention.ms", "7200000"), AlterConfigOp.OpType.SET),
        new AlterConfigOp(new ConfigEntry("max.message.bytes", null), AlterConfigOp.OpType.DELETE)))).all());
    awaitValue(admin, res, "retention.ms", "7200000");
    cfg = describe(admin, res);
    equal("7200000", cfg.get("retention.ms").value(), "retention.ms after SET");
    equal(ConfigEntry.ConfigSource.DEFAULT_CONFIG, cfg.get("max.message.bytes").source(), "max.message.bytes source after DELETE");
    expectThrows(InvalidConfigurationException.class, "incrementalAlterConfigs retention.ms=abc",
        () -> get(admin.incrementalAlterConfigs(Map.of(res, List.of(
            new AlterConfigOp(new ConfigEntry("retention.ms", "abc"), AlterConfigOp.OpType.SET)))).all()));
    expectThrows(InvalidConfigurationException.class, "incrementalAlterConfigs of an unknown config",
        () -> get(admin.incrementalAlterConfigs(Map.of(res, List.of(
            new AlterConfigOp(new ConfigEntry("no.such.config", "1"), AlterConfigOp.OpType.SET)))).all()));
    expectThrows(UnknownTopicOrPartitionException.class, "incrementalAlterConfigs of an unknown topic",
        () -> get(admin.incrementalAlterConfigs(Map.of(new ConfigResource(ConfigResource.Type.TOPIC, topic + "-nope"),
            List.of(new AlterConfigOp(new ConfigEntry("retention.ms", "1"), AlterConfigOp.OpType.SET)))).all()));
    equal("7200000", describe(admin, res).get("retention.ms").value(), "retention.ms after the refused alters");
    ok("incrementalAlterConfigs SET and DELETE; bad value, unknown config: InvalidConfiguration; unknown topic: UnknownTopicOrPartition");
  }

  /**
   * A cluster-wide broker default set by incrementalAlterConfigs (what
   * kafka-configs --entity-default does) shows on the broker and on a
   * topic without its own value, then goes away with DELETE.
   */
  static void brokerDefault(Admin admin, String topic, Node node) throws Exception {
    ConfigResource cluster = new ConfigResource(ConfigResource.Type.BROKER, "");
    ConfigResource broker = new ConfigResource(ConfigResource.Type.BROKER, String.valueOf(node.id()));
    ConfigResource res = new ConfigResource(ConfigResource.Type.TOPIC, topic);
    get(admin.incrementalAlterConfigs(Map.of(cluster, List.of(
        new AlterConfigOp(new ConfigEntry("log.retention.ms", "86400000"), AlterConfigOp.OpType.SET)))).all());
    // Kafka applies a dynamic broker config once its metadata log reaches
    // the broker, a moment after the alter returns.
    awaitValue(admin, broker, "log.retention.ms", "86400000");
    ConfigEntry b = describe(admin, broker).get("log.retention.ms");
    equal("86400000", b.value(), "the broker's log.retention.ms after setting the cluster default");
    equal(ConfigEntry.ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG, b.source(), "the broker's log.retention.ms source");
    ConfigEntry t = describe(admin, res).get("retention.ms");
    equal("86400000", t.value(), "a topic's retention.ms after setting the cluster default");
    equal(ConfigEntry.ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG, t.source(), "a topic's retention.ms source");
    get(admin.incrementalAlterConfigs(Map.of(cluster, List.of(
        new AlterConfigOp(new ConfigEntry("log.retention.ms", null), AlterConfigOp.OpType.DELETE)))).all());
    awaitValue(admin, res, "retention.ms", "604800000");
    t = describe(admin, res).get("retention.ms");
    equal("604800000", t.value(), "a topic's retention.ms after deleting the cluster default");
    equal(ConfigEntry.ConfigSource.DEFAULT_CONFIG, t.source(), "a topic's retention.ms source after deleting the cluster default");
    ok("incrementalAlterConfigs of the cluster-wide broker default: on the broker and a topic as DYNAMIC_DEFAULT_BROKER_CONFIG; DELETE restores the default");
  }

  static void awaitValue(Admin admin, ConfigResource res, String name, String want) throws Exception {
    String[] last = {null};
    Checks.await(res + " " + name + "=" + want, () -> {
      try {
        ConfigEntry e = describe(admin, res).get(name);
        last[0] = e == null ? null : e.value();
        return want.equals(last[0]);
      } catch (Exception e) {
        throw new RuntimeException(e);
      }
    }, () -> "last seen " + last[0]);
  }

  static Config describe(Admin admin, ConfigResource res) throws Exception {
    return get(admin.describeConfigs(List.of(res), new DescribeConfigsOptions().includeSynonyms(true)).all()).get(res);
  }

  static void deleteTopics(Admin admin, String prefix) throws Exception {
    String topic = prefix + "-topic";
    get(admin.deleteTopics(List.of(topic)).all());
    Checks.await("the deleted topic to leave listTopics", () -> {
      try {
        return !get(admin.listTopics().names()).contains(topic);
      } catch (Exception e) {
        throw new RuntimeException(e);
      }
    }, () -> topic);
    expectThrows(UnknownTopicOrPartitionException.class, "deleteTopics of a deleted topic",
        () -> get(admin.deleteTopics(List.of(topic)).all()));
    expectThrows(UnknownTopicOrPartitionException.class, "describeTopics of a deleted topic",
        () -> get(admin.describeTopics(List.of(topic)).allTopicNames()));
    ok("deleteTopics; again: UnknownTopicOrPartitionException");
  }
}
