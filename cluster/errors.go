package cluster

import "fmt"

func errBrokerLive(node int32) error {
	return fmt.Errorf("cluster: takeover: broker %d is live; its partitions move when it stops", node)
}

func errNoMember(node int32) error {
	return fmt.Errorf("cluster: takeover: no broker %d was ever a member of this cluster", node)
}

func errTakeoverRace(node int32) error {
	return fmt.Errorf("cluster: takeover of broker %d: its member record kept changing", node)
}
