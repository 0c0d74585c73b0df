package engine

import (
	"strings"
	"testing"

	"github.com/mqttlab/mqttlab/engine/packet"
)

// TestBrokerInboundAliasRule: a client's Topic Alias above the CONNACK's
// Topic Alias Maximum closes the connection with DISCONNECT 0x94 under
// [MQTT-3.3.2-9]; any alias when the broker allows none, under
// [MQTT-3.2.2-18].
func TestBrokerInboundAliasRule(t *testing.T) {
	for _, c := range []struct {
		max  uint16
		rule string
	}{{2, "[MQTT-3.3.2-9]"}, {0, "[MQTT-3.2.2-18]"}} {
		cfg := DefaultBrokerConfig(BrokerPolicy{Persistence: LegacyPersistNone, UnknownPubrel: UnknownAckAnswer,
			UnknownPubrec: UnknownAckAnswer, AckOrder: AckAfterCallback})
		cfg.TopicAliasMaximum = c.max
		b, err := NewBroker(cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		b.Step(0, ConnOpened{Conn: 1})
		b.Step(0, BytesReceived{Conn: 1, Data: mustAppend(t, packet.V5, &packet.Connect{Version: packet.V5, ClientID: "x", CleanStart: true})})
		p := &packet.Publish{Topic: []byte("t")}
		p.Props.Present = p.Props.Present.With(packet.PropTopicAlias)
		p.Props.TopicAlias = c.max + 1
		acts := b.Step(0, BytesReceived{Conn: 1, Data: mustAppend(t, packet.V5, p)})
		var cc *CloseConn
		var disc *packet.Disconnect
		for _, a := range acts {
			switch a := a.(type) {
			case CloseConn:
				cc = &a
			case Send:
				disc, _ = a.Packet.(*packet.Disconnect)
			}
		}
		if cc == nil || cc.Reason == nil || !strings.Contains(cc.Reason.Error(), c.rule) || disc == nil || disc.Reason != packet.TopicAliasInvalid {
			t.Fatalf("max %d: alias %d gave %#v, want DISCONNECT 0x94 and a close naming %s", c.max, c.max+1, acts, c.rule)
		}
	}
}
