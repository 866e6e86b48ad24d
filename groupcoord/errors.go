package groupcoord

import "errors"

// Errors of the coordinator. Each stands for one Kafka error code, which
// the protocol layer maps it to; the name says which.
var (
	ErrInvalidGroupID          = errors.New("groupcoord: invalid group id")
	ErrInvalidSessionTimeout   = errors.New("groupcoord: session timeout outside group.min/max.session.timeout.ms")
	ErrInconsistentProtocol    = errors.New("groupcoord: protocol type or protocols do not match the group's")
	ErrGroupMaxSize            = errors.New("groupcoord: group.max.size reached")
	ErrMemberIDRequired        = errors.New("groupcoord: member id required: rejoin with the one given (KIP-394)")
	ErrUnknownMember           = errors.New("groupcoord: unknown member id")
	ErrIllegalGeneration       = errors.New("groupcoord: illegal generation")
	ErrRebalanceInProgress     = errors.New("groupcoord: rebalance in progress")
	ErrFencedInstance          = errors.New("groupcoord: a newer member holds this group.instance.id")
	ErrCoordinatorNotAvailable = errors.New("groupcoord: coordinator not available")
	ErrNotCoordinator          = errors.New("groupcoord: not the coordinator of this group (its shard is not owned here, or the coordinator shut down)")
	ErrGroupNotFound           = errors.New("groupcoord: group id not found")
	ErrNonEmptyGroup           = errors.New("groupcoord: group is not empty")
	ErrSubscribedToTopic       = errors.New("groupcoord: group is subscribed to the topic")
	ErrMetadataTooLarge        = errors.New("groupcoord: offset metadata exceeds offset.metadata.max.bytes")
	ErrUnknownTopicOrPartition = errors.New("groupcoord: unknown topic or partition")
)
