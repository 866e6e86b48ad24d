package txncoord

// State is a transaction's state, with Kafka's names (TransactionState).
type State int8

// The states of a transactional id. Empty: no transaction is open;
// Ongoing: one is, with partitions or groups added; Prepare*: EndTxn
// was accepted and the markers are being written; Complete*: they are
// written; PrepareEpochFence: a newer producer (or the timeout sweep)
// fenced the open transaction, which is being aborted; Dead: the id
// expired and is being removed.
const (
	Empty State = iota
	Ongoing
	PrepareCommit
	PrepareAbort
	CompleteCommit
	CompleteAbort
	PrepareEpochFence
	Dead
)

var stateNames = [...]string{
	Empty:             "Empty",
	Ongoing:           "Ongoing",
	PrepareCommit:     "PrepareCommit",
	PrepareAbort:      "PrepareAbort",
	CompleteCommit:    "CompleteCommit",
	CompleteAbort:     "CompleteAbort",
	PrepareEpochFence: "PrepareEpochFence",
	Dead:              "Dead",
}

// String returns Kafka's name of the state, as DescribeTransactions and
// ListTransactions show it.
func (s State) String() string {
	if s >= 0 && int(s) < len(stateNames) {
		return stateNames[s]
	}
	return "Unknown"
}

// ParseState returns the state with Kafka's name name (case-sensitive,
// as Kafka's TransactionState.fromName); ok is false for any other.
func ParseState(name string) (State, bool) {
	for s, n := range stateNames {
		if n == name {
			return State(s), true
		}
	}
	return 0, false
}
