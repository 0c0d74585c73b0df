package packet

import (
	"encoding/hex"
	"strings"
	"testing"
)

// h parses a hex string with optional spaces, and quoted ASCII runs like
// 'MQTT', into bytes.
func h(t testing.TB, s string) []byte {
	t.Helper()
	var out []byte
	for len(s) > 0 {
		s = strings.TrimLeft(s, " ")
		if s == "" {
			break
		}
		if s[0] == '\'' {
			end := strings.IndexByte(s[1:], '\'')
			out = append(out, s[1:1+end]...)
			s = s[2+end:]
			continue
		}
		b, err := hex.DecodeString(s[:2])
		if err != nil {
			t.Fatalf("bad hex %q: %v", s, err)
		}
		out = append(out, b...)
		s = s[2:]
	}
	return out
}

func b(s string) []byte { return []byte(s) }

func props(ids ...PropID) PropSet { return set(ids...) }
