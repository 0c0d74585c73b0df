package engine

import (
	"bytes"
	"strings"
	"testing"

	"github.com/mqttlab/mqttlab/engine/packet"
)

// TestRestoredMessageFullyChecked checks that only decoded messages skip
// the codec's topic checks when forwarded (brokerMsg.checked): a queued
// message restored from a record whose topic is not valid UTF-8 (which the
// record reader does not check) is still refused by the encoder and
// dropped, never sent as bytes no client could decode; the valid message
// restored beside it is forwarded.
func TestRestoredMessageFullyChecked(t *testing.T) {
	cfg := DefaultBrokerConfig(BrokerPolicy{Persistence: PersistEveryChange, UnknownPubrel: UnknownAckAnswer,
		UnknownPubrec: UnknownAckAnswer, AckOrder: AckAfterCallback})
	b, err := NewBroker(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	disk := map[string][]byte{}
	step := func(b *Broker, ev Event) []Action {
		acts := b.Step(0, ev)
		for _, a := range acts {
			if p, ok := a.(Persist); ok {
				if p.Op == Put {
					disk[p.Key] = p.Value
				} else {
					delete(disk, p.Key)
				}
			}
		}
		return acts
	}
	connect := func(b *Broker, conn ConnID, id string) {
		step(b, ConnOpened{Conn: conn})
		step(b, BytesReceived{Conn: conn, Data: mustAppend(t, packet.V311, &packet.Connect{Version: packet.V311, ClientID: id})})
	}
	connect(b, 1, "sub")
	step(b, BytesReceived{Conn: 1, Data: mustAppend(t, packet.V311, &packet.Subscribe{PacketID: 1, Subs: []packet.Subscription{{Filter: "t/#", QoS: 1}}})})
	step(b, ConnClosed{Conn: 1})
	connect(b, 2, "pub")
	for _, topic := range []string{"t/bad", "t/good"} {
		step(b, BytesReceived{Conn: 2, Data: mustAppend(t, packet.V311, &packet.Publish{QoS: 1, PacketID: 1, Topic: []byte(topic), Payload: []byte("m")})})
	}
	corrupted := 0
	var recs []Record
	for k, v := range disk {
		if strings.HasPrefix(k, prefixOut) {
			if i := bytes.Index(v, []byte("t/bad")); i >= 0 {
				v = bytes.Clone(v)
				v[i+2] = 0xFF // "t/\xffad": no wildcard, not UTF-8
				corrupted++
			}
		}
		recs = append(recs, Record{Key: k, Value: v})
	}
	if corrupted != 1 {
		t.Fatalf("%d queued records hold the topic, want 1", corrupted)
	}
	b2, err := NewBroker(cfg, recs)
	if err != nil {
		t.Fatalf("restore: %v", err)
	}
	step(b2, ConnOpened{Conn: 3})
	var sent []string
	for _, a := range step(b2, BytesReceived{Conn: 3, Data: mustAppend(t, packet.V311, &packet.Connect{Version: packet.V311, ClientID: "sub"})}) {
		if s, ok := a.(Send); ok {
			if p, ok := s.Packet.(*packet.Publish); ok {
				sent = append(sent, string(p.Topic))
			}
		}
	}
	if len(sent) != 1 || sent[0] != "t/good" {
		t.Fatalf("the resumed session got PUBLISHes %q, want only t/good", sent)
	}
	if st := b2.Stats(); st.DroppedSize != 1 {
		t.Fatalf("DroppedSize %d, want 1 (the restored message with the bad topic)", st.DroppedSize)
	}
}
