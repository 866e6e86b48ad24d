package protocol

import "fmt"

// maxTopicNameLen is Kafka's limit on topic names.
const maxTopicNameLen = 249

// validateTopicName applies Kafka's rules: 1..249 characters of
// [a-zA-Z0-9._-], and not "." or "..".
func validateTopicName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("topic name is empty")
	case name == "." || name == "..":
		return fmt.Errorf("topic name %q is not allowed", name)
	case len(name) > maxTopicNameLen:
		return fmt.Errorf("topic name is %d characters, the limit is %d", len(name), maxTopicNameLen)
	}
	for _, c := range []byte(name) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return fmt.Errorf("topic name %q contains %q; legal characters are ASCII letters, digits, '.', '_' and '-'", name, c)
		}
	}
	return nil
}
