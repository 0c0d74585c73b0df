package live

import "testing"

// TestWalkPublishProps: the crash canary's walker reads the properties a
// Client's 5.0 PUBLISH may carry and panics (the process's crash) on an
// identifier a PUBLISH may not carry, a Topic Alias of 0 and a Property
// Length past the packet, as the canary says.
func TestWalkPublishProps(t *testing.T) {
	pub := func(qos byte, props ...byte) []byte {
		body := []byte{0, 4, 'f', 'z', '/', 'a'}
		if qos > 0 {
			body = append(body, 0, 7)
		}
		body = append(append(append(body, byte(len(props))), props...), 'x')
		return append([]byte{0x30 | qos<<1, byte(len(body))}, body...)
	}
	for _, c := range []struct {
		name   string
		pkt    []byte
		panics bool
	}{
		{"no properties", pub(0), false},
		{"QoS 1, no properties", pub(1), false},
		{"every property a Client's PUBLISH may carry", pub(1, 0x01, 1, 0x02, 0, 0, 0, 9, 0x03, 0, 1, 't', 0x08, 0, 1, 'r', 0x09, 0, 1, 'c',
			0x23, 0, 3, 0x26, 0, 1, 'k', 0, 1, 'v'), false},
		{"an unknown identifier", pub(0, 0x7f, 1), true},
		{"a Subscription Identifier", pub(0, 0x0b, 1), true},
		{"Topic Alias 0", pub(0, 0x23, 0, 0), true},
		{"a Property Length past the packet", func() []byte { p := pub(0); p[len(p)-2] = 0x7f; return p }(), true},
		{"a duplicate property (the engine refuses it)", pub(0, 0x01, 0, 0x01, 0), false},
	} {
		panicked := func() (p bool) {
			defer func() { p = recover() != nil }()
			walkPublishProps(c.pkt)
			return false
		}()
		if panicked != c.panics {
			t.Errorf("%s: panicked %v, want %v", c.name, panicked, c.panics)
		}
	}
}
