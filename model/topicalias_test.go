package model

import (
	"strings"
	"testing"
)

// aliasConnect opens a connection of node announcing Topic Alias Maximum max.
func (b *hb) aliasConnect(node string, max uint16) *hb {
	b.opened(node)
	b.xfer(node, BrokerNode, Packet{Type: CONNECT, TopicAlias: max})
	b.xfer(BrokerNode, node, Packet{Type: CONNACK})
	return b.ev(Event{Kind: Connected, Node: node, Peer: BrokerNode, Version: 5})
}

// aliasPub is the broker's QoS 0 PUBLISH of msg to node with Topic Alias
// alias, naming topic (empty: the alias alone).
func (b *hb) aliasPub(node, topic string, alias uint16, msg string) *hb {
	return b.xfer(BrokerNode, node, Packet{Type: PUBLISH, Topic: topic, TopicAlias: alias, Msg: msg, Payload: msg})
}

// TestTopicAlias: each way a broker can misuse a Topic Alias is reported
// under the statement it breaks, at the PUBLISH, citing the CONNECT (or the
// PUBLISH that set the alias before); correct use passes.
func TestTopicAlias(t *testing.T) {
	cases := []struct {
		name string
		b    *hb
		want string // "" for no violation
	}{
		{"set, then alone, then replaced", newHB().aliasConnect("s", 2).aliasPub("s", "t/a", 1, "m1").aliasPub("s", "", 1, "m2").
			aliasPub("s", "t/b", 1, "m3").aliasPub("s", "", 1, "m4").aliasPub("s", "t/c", 2, "m5"), ""},
		{"no alias at all", newHB().aliasConnect("s", 0).aliasPub("s", "t/a", 0, "m1"), ""},
		{"above the maximum", newHB().aliasConnect("s", 1).aliasPub("s", "t/a", 2, "m1"), "above the Topic Alias Maximum 1 of its CONNECT (step 2) [MQTT-3.3.2-11]"},
		{"none announced", newHB().aliasConnect("s", 0).aliasPub("s", "t/a", 1, "m1"), "announced no Topic Alias Maximum [MQTT-3.1.2-27]"},
		{"never set", newHB().aliasConnect("s", 4).aliasPub("s", "", 3, "m1"), "names Topic Alias 3 alone, which no PUBLISH on this connection"},
		{"carried across connections", newHB().aliasConnect("s", 4).aliasPub("s", "t/a", 1, "m1").closed("s").
			aliasConnect("s", 4).aliasPub("s", "", 1, "m2"), "set only on an earlier connection (step 8): mappings are not carried forward [MQTT-3.3.2-7]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			vs := Check(c.b.h, Options{Only: SetOf(TopicAlias)})
			if c.want == "" {
				if len(vs) != 0 {
					t.Fatalf("violations %v, want none", vs)
				}
				return
			}
			if len(vs) != 1 || vs[0].Node != BrokerNode || !strings.Contains(vs[0].Reason, c.want) {
				t.Fatalf("violations %v, want one of the broker containing %q", vs, c.want)
			}
		})
	}
}

// TestTopicAliasResolved: the checks that read topics see the topic an
// alias sent alone maps, on both sides of the connection, while the
// recorded history keeps its empty Topic Name.
func TestTopicAliasResolved(t *testing.T) {
	b := newHB().aliasConnect("s", 2).aliasPub("s", "t/a", 1, "m1").aliasPub("s", "", 1, "m2")
	x := newIndex(&b.h)
	for i, e := range x.h.Events {
		if e.Packet.Type == PUBLISH && e.Packet.Topic != "t/a" {
			t.Errorf("step %d: resolved topic %q, want t/a", i, e.Packet.Topic)
		}
	}
	if b.h.Events[len(b.h.Events)-1].Packet.Topic != "" {
		t.Error("the recorded history was changed")
	}
	// A broker still writing on the connection the client left resolves by
	// that connection's mappings; the client's new connection starts empty.
	b = newHB().aliasConnect("s", 2).aliasPub("s", "t/a", 1, "m1").
		sent("s", BrokerNode, Packet{Type: CONNECT, TopicAlias: 2}).
		sent(BrokerNode, "s", Packet{Type: PUBLISH, TopicAlias: 1, Msg: "m2", Payload: "m2"})
	x = newIndex(&b.h)
	if got := x.h.Events[len(x.h.Events)-1].Packet.Topic; got != "t/a" {
		t.Errorf("broker's send on its old connection resolved to %q, want t/a", got)
	}
}
