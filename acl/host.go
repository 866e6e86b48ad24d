package acl

import (
	"fmt"
	"net/netip"
	"strings"
)

// HostAddress prints a client address as Kafka's brokers match it against
// an ACL's host, Java's InetAddress.getHostAddress: dotted IPv4 (an
// IPv4-mapped IPv6 address too, as Java turns it into IPv4), and IPv6 as
// eight groups of lowercase hex without leading zeros or "::"
// compression ("0:0:0:0:0:0:0:1"), with its zone after '%'.
func HostAddress(addr netip.Addr) string {
	if addr.Is4() || addr.Is4In6() {
		return addr.Unmap().String()
	}
	if !addr.Is6() {
		return ""
	}
	b := addr.As16()
	groups := make([]string, 8)
	for i := range groups {
		groups[i] = fmt.Sprintf("%x", uint16(b[2*i])<<8|uint16(b[2*i+1]))
	}
	s := strings.Join(groups, ":")
	if z := addr.Zone(); z != "" {
		s += "%" + z
	}
	return s
}
