// Package history records what a cluster test saw and checks it against
// the guarantees the cluster makes, in the manner of a Jepsen checker.
//
// A test records every produce attempt (its value, the partition and
// offset of its acknowledgement or its error, and the real time it started
// and ended), every record a consumer read, the changes of the partitions'
// owner keys in etcd, the index commits each broker made, and samples of
// who owned what at an etcd revision. After the test it reads the final log
// of every partition and calls Check, which reports:
//
//   - lost: an acknowledged value missing from the final log;
//   - duplicate: a value twice in the final log;
//   - phantom: a value in the final log that nobody produced;
//   - ack-offset: the offset an acknowledgement named holds another value;
//   - gap: the final log's offsets are not contiguous;
//   - order: an acknowledgement that ended before another started got the
//     higher offset (real-time order per partition);
//   - read: a read that is not a prefix of the final log (its offset holds
//     another value there, or lies past the end);
//   - owner: two owners of a partition at one etcd revision, or an owner
//     epoch that does not rise with a change of owner;
//   - sample: an ownership sample that disagrees with another one at the
//     same revision or with the owner keys' history;
//   - fence: an index commit by a broker that did not own the partition at
//     the commit's revision.
//
// The package knows neither Kafka clients nor etcd: the harness turns what
// they return into these plain records. It never retries or waits; it only
// judges a finished history.
package history
