package partition

import "errors"

// ErrNotLeader: this broker does not own the partition; protocol maps it to NOT_LEADER_OR_FOLLOWER.
var ErrNotLeader = errors.New("partition: this broker does not own the partition")
