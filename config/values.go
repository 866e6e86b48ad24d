package config

import (
	"fmt"
	"strconv"
	"time"
)

// Values reads the effective configs of one resource with typed accessors.
// Values were validated when they were set; a stored value that no longer
// parses (written by an older release with looser rules) reads as the
// default instead of failing the caller.
//
// Asking for a name that was never registered is a programming error and
// panics, so a typo cannot silently read a zero.
type Values struct {
	resolve func(name string) string
}

// Topic returns the effective configs of a topic with its own settings own
// over the dynamic broker configs broker.
func Topic(own, broker map[string]string) Values {
	return Values{resolve: func(name string) string {
		d, ok := topicDefs[name]
		if !ok {
			panic(fmt.Sprintf("config: topic config %s is not registered", name))
		}
		v, _ := ResolveTopic(d, own, broker)
		return checked(d, v)
	}}
}

// Broker returns the effective broker configs given the dynamic ones.
func Broker(broker map[string]string) Values {
	return Values{resolve: func(name string) string {
		d, ok := brokerDefs[name]
		if !ok {
			panic(fmt.Sprintf("config: broker config %s is not registered", name))
		}
		v, _ := ResolveBroker(d, broker)
		return checked(d, v)
	}}
}

// checked falls back to the default for a stored value the def rejects.
func checked(d Def, v string) string {
	if v != d.Default && d.Validate(v) != nil {
		if bd, ok := brokerDefs[d.BrokerName]; ok && d.BrokerName != "" {
			return bd.Default
		}
		return d.Default
	}
	return v
}

// String returns the value as written.
func (v Values) String(name string) string { return v.resolve(name) }

// Bool returns a boolean config.
func (v Values) Bool(name string) bool { return v.resolve(name) == "true" }

// Int returns an integer config (int, short or long).
func (v Values) Int(name string) int64 {
	n, _ := strconv.ParseInt(v.resolve(name), 10, 64)
	return n
}

// Millis returns an integer config that counts milliseconds (*.ms) as a
// duration.
func (v Values) Millis(name string) time.Duration {
	return time.Duration(v.Int(name)) * time.Millisecond
}
