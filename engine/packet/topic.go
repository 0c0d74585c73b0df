package packet

import "strings"

// checkTopicName enforces the Topic Name rules on a PUBLISH or Will topic.
// aliased reports that a v5 Topic Alias accompanies the name, which then may
// be empty.
func checkTopicName(v Version, t []byte, aliased bool, field string) error {
	if len(t) == 0 {
		if v == V5 && aliased {
			return nil // 5.0 §3.3.2.1: an empty name with a Topic Alias uses the alias.
		}
		// [MQTT-4.7.3-1] Topic Names MUST be at least one character long
		// (5.0 §3.3.4: an empty name without Topic Alias is a Protocol Error).
		return protocol("MQTT-4.7.3-1", field+" is empty")
	}
	if plainASCII(t, true) {
		return nil
	}
	if err := checkUTF8(v, t, field); err != nil {
		return err
	}
	for _, c := range t {
		if c == '+' || c == '#' {
			// [MQTT-3.3.2-2], [MQTT-4.7.1-1] (3.1.1) / [MQTT-4.7.0-1] (5.0):
			// no wildcard characters in a Topic Name.
			return refuse("MQTT-3.3.2-2", TopicNameInvalid, "wildcard in "+field)
		}
	}
	return nil
}

// checkTopicNameString is checkTopicName for a string field (Will Topic,
// Response Topic).
func checkTopicNameString(v Version, t string, field string) error {
	if t == "" {
		// [MQTT-4.7.3-1] Topic Names MUST be at least one character long.
		return protocol("MQTT-4.7.3-1", field+" is empty")
	}
	if err := checkUTF8String(v, t, field); err != nil {
		return err
	}
	if strings.ContainsAny(t, "+#") {
		// [MQTT-3.3.2-2], [MQTT-4.7.1-1] (3.1.1) / [MQTT-4.7.0-1] (5.0):
		// no wildcard characters in a Topic Name.
		return refuse("MQTT-3.3.2-2", TopicNameInvalid, "wildcard in "+field)
	}
	return nil
}

// sharePrefix starts a v5 shared subscription filter.
const sharePrefix = "$share/"

// checkFilter enforces the Topic Filter rules and reports whether the filter
// is a v5 shared subscription ($share/{ShareName}/{filter}).
func checkFilter(v Version, f string) (shared bool, err error) {
	if err := checkUTF8String(v, f, "topic filter"); err != nil {
		return false, err
	}
	if f == "" {
		// [MQTT-4.7.3-1] Topic Filters MUST be at least one character long.
		return false, refuse("MQTT-4.7.3-1", TopicFilterInvalid, "empty topic filter")
	}
	if v == V5 && strings.HasPrefix(f, sharePrefix) {
		rest := f[len(sharePrefix):]
		name, filter, ok := strings.Cut(rest, "/")
		if name == "" {
			// [MQTT-4.8.2-1] a ShareName at least one character long.
			return true, refuse("MQTT-4.8.2-1", TopicFilterInvalid, "empty ShareName in shared subscription")
		}
		if strings.ContainsAny(name, "+#") {
			// [MQTT-4.8.2-2] the ShareName MUST NOT contain "/", "+" or "#".
			return true, refuse("MQTT-4.8.2-2", TopicFilterInvalid, "wildcard in the ShareName of a shared subscription")
		}
		if !ok || filter == "" {
			// [MQTT-4.8.2-2] ShareName MUST be followed by "/" and a Topic Filter.
			return true, refuse("MQTT-4.8.2-2", TopicFilterInvalid, "shared subscription without topic filter")
		}
		f = filter
		shared = true
	}
	for i := 0; i < len(f); i++ {
		switch f[i] {
		case '#':
			if (i > 0 && f[i-1] != '/') || i != len(f)-1 {
				// [MQTT-4.7.1-2] (3.1.1) / [MQTT-4.7.1-1] (5.0) "#" MUST be a
				// whole level and the last character.
				return shared, refuse(rule(v, "MQTT-4.7.1-2", "MQTT-4.7.1-1"), TopicFilterInvalid, "'#' not alone in the last level of topic filter")
			}
		case '+':
			if (i > 0 && f[i-1] != '/') || (i < len(f)-1 && f[i+1] != '/') {
				// [MQTT-4.7.1-3] (3.1.1) / [MQTT-4.7.1-2] (5.0) "+" MUST occupy
				// an entire level.
				return shared, refuse(rule(v, "MQTT-4.7.1-3", "MQTT-4.7.1-2"), TopicFilterInvalid, "'+' not alone in its level of topic filter")
			}
		}
	}
	return shared, nil
}
