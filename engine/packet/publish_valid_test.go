package packet

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// TestAppendPublishValid checks AppendPublishValid against Append on
// PUBLISHes that keep its promise (topics and properties as a decoder
// returns them, subsets of them, with and without a Message Expiry
// Interval), and that it refuses what Append refuses in the fields it still
// checks: QoS, DUP, Packet Identifier and version.
func TestAppendPublishValid(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	topics := []string{"a", "a/b", "sensors/7/t", "$SYS/x", "ü/ß/日本", "a//b", "/"}
	for range 5000 {
		v := []Version{V311, V5}[r.IntN(2)]
		p := &Publish{QoS: QoS(r.IntN(3)), Retain: r.IntN(2) == 0, Topic: b(topics[r.IntN(len(topics))]),
			Payload: make([]byte, r.IntN(300))}
		if p.QoS > 0 {
			p.PacketID, p.Dup = uint16(1+r.IntN(65535)), r.IntN(2) == 0
		}
		if v == V5 && r.IntN(2) == 0 {
			pr := &p.Props
			if r.IntN(2) == 0 {
				pr.Present, pr.PayloadFormat = pr.Present.With(PropPayloadFormat), byte(r.IntN(2))
			}
			if r.IntN(2) == 0 {
				pr.Present, pr.ContentType = pr.Present.With(PropContentType), "text/plain"
			}
			if r.IntN(2) == 0 {
				pr.Present, pr.ResponseTopic = pr.Present.With(PropResponseTopic), "reply/to"
			}
			if r.IntN(2) == 0 {
				pr.Present, pr.CorrelationData = pr.Present.With(PropCorrelationData), []byte{1, 2, 3}
			}
			if r.IntN(2) == 0 {
				pr.Present, pr.MessageExpiry = pr.Present.With(PropMessageExpiry), r.Uint32()
			}
			if r.IntN(2) == 0 {
				pr.User = []UserProperty{{Key: "k", Value: "v"}}
			}
		}
		want, err := Append(nil, v, p)
		if err != nil {
			t.Fatalf("Append(%v, %#v): %v", v, p, err)
		}
		got, err := AppendPublishValid([]byte("x"), v, p)
		if err != nil || !bytes.Equal(got[1:], want) || got[0] != 'x' {
			t.Fatalf("AppendPublishValid(%v, %#v) = % x, %v; Append wrote % x", v, p, got, err, want)
		}
	}
	for _, tc := range []struct {
		v Version
		p *Publish
	}{
		{V5, &Publish{QoS: 3, PacketID: 1, Topic: b("a")}},
		{V5, &Publish{QoS: 0, Dup: true, Topic: b("a")}},
		{V311, &Publish{QoS: 0, PacketID: 5, Topic: b("a")}},
		{V5, &Publish{QoS: 1, PacketID: 0, Topic: b("a")}},
		{V311, &Publish{QoS: 2, PacketID: 0, Topic: b("a")}},
		{3, &Publish{QoS: 1, PacketID: 1, Topic: b("a")}},
		{V5, nil},
	} {
		if _, err := Append(nil, tc.v, tc.p); err == nil {
			t.Fatalf("Append(%v, %#v) accepts it", tc.v, tc.p)
		}
		if got, err := AppendPublishValid(nil, tc.v, tc.p); err == nil {
			t.Fatalf("AppendPublishValid(%v, %#v) = % x, want the refusal Append gives", tc.v, tc.p, got)
		}
	}
}
