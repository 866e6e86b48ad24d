package metadata

// groupBrokerConfigDefs are the broker configs of the consumer group
// coordinator (group.*, offsets.*).
var groupBrokerConfigDefs = []ConfigDef{}
