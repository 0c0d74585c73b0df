package model

import "strings"

// Matches reports whether topic name t matches topic filter f, with '+'
// matching one level and a trailing '#' any number of levels (including the
// parent) [MQTT-4.7.1-1] [MQTT-4.7.1-2]; wildcards at the first level do not
// match topics starting with '$' [MQTT-4.7.2-1].
func Matches(f, t string) bool {
	if strings.HasPrefix(t, "$") && (strings.HasPrefix(f, "+") || strings.HasPrefix(f, "#")) {
		return false
	}
	for {
		fl, frest, fmore := strings.Cut(f, "/")
		tl, trest, tmore := strings.Cut(t, "/")
		switch {
		case fl == "#":
			return !fmore
		case fl != "+" && fl != tl:
			return false
		case !fmore && !tmore:
			return true
		case !fmore:
			return false
		case !tmore:
			// "a/#" matches "a": the parent level.
			return frest == "#"
		}
		f, t = frest, trest
	}
}
