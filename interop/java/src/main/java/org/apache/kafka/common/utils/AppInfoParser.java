package org.apache.kafka.common.utils;

/**
 * The one method of Kafka 4.3's AppInfoParser that the FileStream
 * connectors call (their version()). The pinned connect-file is 4.3.1,
 * the newest the registry serves, and Kafka 4.4 moved the class to
 * org.apache.kafka.common.utils.internals, so without this bridge Connect
 * cannot even list the plugins. Delete it once connect-file is pinned at
 * the same version as the rest of Kafka.
 */
public final class AppInfoParser {
    private AppInfoParser() {
    }

    /** The version of the kafka-clients jar on the classpath. */
    public static String getVersion() {
        return org.apache.kafka.common.utils.internals.AppInfoParser.getVersion();
    }
}
