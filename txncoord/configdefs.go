package txncoord

import "github.com/sediment-io/sediment/config"

// The broker configs of the transaction coordinator, named and defaulted
// as Kafka's. The broker reads them into Config when it opens the
// coordinator, so a change takes effect at its next start (in Kafka they
// are static server properties).
func init() { config.RegisterBroker(brokerConfigDefs...) }

var brokerConfigDefs = []config.Def{
	{Name: "transaction.max.timeout.ms", Type: config.Int, Default: "900000", Min: 1,
		Doc: "largest transaction.timeout.ms a transactional producer may ask for (INVALID_TRANSACTION_TIMEOUT above it); read at start-up"},
	{Name: "transactional.id.expiration.ms", Type: config.Int, Default: "604800000", Min: 1,
		Doc: "a transactional id with no transaction for this long is removed; read at start-up"},
	{Name: "transaction.abort.timed.out.transaction.cleanup.interval.ms", Type: config.Int, Default: "10000", Min: 1,
		Doc: "how often transactions open past their timeout are fenced and aborted; read at start-up"},
	{Name: "transaction.remove.expired.transaction.cleanup.interval.ms", Type: config.Int, Default: "3600000", Min: 1,
		Doc: "how often expired transactional ids are removed; read at start-up"},
}
