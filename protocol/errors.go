package protocol

import (
	"context"
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/sediment-io/sediment/config"
	"github.com/sediment-io/sediment/groupcoord"
	"github.com/sediment-io/sediment/storage/partition"
	"github.com/sediment-io/sediment/storage/record"
)

// errorCode maps an error from the layers below to its Kafka error code.
func errorCode(err error) int16 {
	if c, ok := groupErrorCode(err); ok {
		return c
	}
	var code *kerr.Error
	switch {
	case err == nil:
		return 0
	case errors.As(err, &code):
		return code.Code
	case errors.Is(err, partition.ErrUnknownPartition):
		return kerr.UnknownTopicOrPartition.Code
	case errors.Is(err, partition.ErrOffsetOutOfRange):
		return kerr.OffsetOutOfRange.Code
	case errors.Is(err, record.ErrCorruptBatch):
		return kerr.CorruptMessage.Code
	case errors.Is(err, record.ErrInvalidRecord), errors.Is(err, record.ErrUnsupportedFmt):
		return kerr.InvalidRecord.Code
	case errors.Is(err, partition.ErrBatchTooLarge):
		return kerr.MessageTooLarge.Code
	case errors.Is(err, partition.ErrOutOfOrderSequence):
		return kerr.OutOfOrderSequenceNumber.Code
	case errors.Is(err, partition.ErrInvalidEpoch):
		return kerr.InvalidProducerEpoch.Code
	case errors.Is(err, partition.ErrTopicExists):
		return kerr.TopicAlreadyExists.Code
	case errors.Is(err, partition.ErrInvalidPartitions):
		return kerr.InvalidPartitions.Code
	case errors.Is(err, config.ErrInvalid):
		return kerr.InvalidConfig.Code
	case errors.Is(err, partition.ErrClosed), errors.Is(err, partition.ErrNotLeader):
		return kerr.NotLeaderForPartition.Code
	case errors.Is(err, partition.ErrStorage):
		return kerr.KafkaStorageError.Code
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return kerr.RequestTimedOut.Code
	}
	return kerr.UnknownServerError.Code
}

// errorMessage is the message to put next to a code, nil when there is none.
func errorMessage(err error) *string {
	if err == nil {
		return nil
	}
	msg := err.Error()
	return &msg
}

// groupErrors maps the group coordinator's errors to their codes.
var groupErrors = []struct {
	err  error
	code int16
}{
	{groupcoord.ErrInvalidGroupID, kerr.InvalidGroupID.Code},
	{groupcoord.ErrInvalidSessionTimeout, kerr.InvalidSessionTimeout.Code},
	{groupcoord.ErrInconsistentProtocol, kerr.InconsistentGroupProtocol.Code},
	{groupcoord.ErrGroupMaxSize, kerr.GroupMaxSizeReached.Code},
	{groupcoord.ErrMemberIDRequired, kerr.MemberIDRequired.Code},
	{groupcoord.ErrUnknownMember, kerr.UnknownMemberID.Code},
	{groupcoord.ErrIllegalGeneration, kerr.IllegalGeneration.Code},
	{groupcoord.ErrRebalanceInProgress, kerr.RebalanceInProgress.Code},
	{groupcoord.ErrFencedInstance, kerr.FencedInstanceID.Code},
	{groupcoord.ErrCoordinatorNotAvailable, kerr.CoordinatorNotAvailable.Code},
	{groupcoord.ErrNotCoordinator, kerr.NotCoordinator.Code},
	{groupcoord.ErrGroupNotFound, kerr.GroupIDNotFound.Code},
	{groupcoord.ErrNonEmptyGroup, kerr.NonEmptyGroup.Code},
	{groupcoord.ErrSubscribedToTopic, kerr.GroupSubscribedToTopic.Code},
	{groupcoord.ErrMetadataTooLarge, kerr.OffsetMetadataTooLarge.Code},
	{groupcoord.ErrUnknownTopicOrPartition, kerr.UnknownTopicOrPartition.Code},
}

// groupErrorCode maps a coordinator error; ok is false for other errors.
func groupErrorCode(err error) (int16, bool) {
	if err == nil {
		return 0, false
	}
	for _, ge := range groupErrors {
		if errors.Is(err, ge.err) {
			return ge.code, true
		}
	}
	return 0, false
}
