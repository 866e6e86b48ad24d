package groupcoord

import "github.com/sediment-io/sediment/config"

// The broker configs of the consumer group coordinator (group.*,
// offsets.*). All of them are dynamic: the coordinator reads them on use,
// so an IncrementalAlterConfigs takes effect on the next request (tests
// shorten timeouts this way).
func init() { config.RegisterBroker(brokerConfigDefs...) }

var brokerConfigDefs = []config.Def{
	{Name: "group.initial.rebalance.delay.ms", Type: config.Int, Default: "3000", Min: 0,
		Doc: "how long the first rebalance of an empty group waits for more members, extended by each new one up to the rebalance timeout"},
	{Name: "group.min.session.timeout.ms", Type: config.Int, Default: "6000", Min: 1,
		Doc: "smallest session.timeout.ms a member may ask for (INVALID_SESSION_TIMEOUT below it)"},
	{Name: "group.max.session.timeout.ms", Type: config.Int, Default: "1800000", Min: 1,
		Doc: "largest session.timeout.ms a member may ask for (INVALID_SESSION_TIMEOUT above it)"},
	{Name: "group.max.size", Type: config.Int, Default: "2147483647", Min: 1,
		Doc: "most members one group may hold (GROUP_MAX_SIZE_REACHED beyond it)"},
	{Name: "offsets.retention.minutes", Type: config.Int, Default: "10080", Min: 1,
		Doc: "committed offsets of an empty group (and of standalone commits) are deleted this long after the group emptied (after the commit)"},
	{Name: "offsets.retention.check.interval.ms", Type: config.Long, Default: "600000", Min: 1,
		Doc: "how often expired offsets, offsets of deleted topics and empty groups without offsets are cleaned up"},
	{Name: "offset.metadata.max.bytes", Type: config.Int, Default: "4096", Min: 0,
		Doc: "largest metadata string of one committed offset (OFFSET_METADATA_TOO_LARGE beyond it)"},
}
