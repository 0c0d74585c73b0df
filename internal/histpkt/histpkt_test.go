package histpkt

import (
	"reflect"
	"testing"

	"github.com/mqttlab/mqttlab/engine/packet"
	"github.com/mqttlab/mqttlab/model"
)

func TestOf(t *testing.T) {
	str := func(b []byte) string { return string(b) }
	id := func(b []byte) string { return "id:" + string(b) }
	cases := []struct {
		name string
		in   packet.Packet
		want model.Packet
	}{
		{"nil", nil, model.Packet{}},
		{"publish", &packet.Publish{Dup: true, QoS: 2, Retain: true, Topic: []byte("t/a"), PacketID: 7, Payload: []byte("p1-3")},
			model.Packet{Type: 3, ID: 7, QoS: 2, Dup: true, Retain: true, Topic: "t/a", Payload: "p1-3", Msg: "id:p1-3"}},
		{"pubrel 0x92", &packet.Pubrel{PacketID: 9, Reason: packet.PacketIdentifierNotFound}, model.Packet{Type: 6, ID: 9, Reason: 0x92}},
		{"subscribe one", &packet.Subscribe{PacketID: 2, Subs: []packet.Subscription{{Filter: "t/#", QoS: 1}}}, model.Packet{Type: 8, ID: 2, Filter: "t/#", QoS: 1}},
		{"subscribe two", &packet.Subscribe{PacketID: 2, Subs: []packet.Subscription{{Filter: "a"}, {Filter: "b"}}}, model.Packet{Type: 8, ID: 2}},
		{"unsubscribe", &packet.Unsubscribe{PacketID: 4, Filters: []string{"t/#"}}, model.Packet{Type: 10, ID: 4, Filter: "t/#"}},
		{"connect", &packet.Connect{CleanStart: true}, model.Packet{Type: 1, Clean: true}},
		{"subscribe opts", &packet.Subscribe{PacketID: 3, Subs: []packet.Subscription{{Filter: "t", QoS: 2, NoLocal: true, RetainAsPublished: true, RetainHandling: 2}}},
			model.Packet{Type: 8, ID: 3, Filter: "t", QoS: 2, Opts: 0x2C}},
		{"suback one", &packet.Suback{PacketID: 3, Reasons: []packet.ReasonCode{1}}, model.Packet{Type: 9, ID: 3, Reason: 1}},
		{"suback two", &packet.Suback{PacketID: 3, Reasons: []packet.ReasonCode{1, 2}}, model.Packet{Type: 9, ID: 3}},
		{"unsuback one", &packet.Unsuback{PacketID: 5, Reasons: []packet.ReasonCode{0x11}}, model.Packet{Type: 11, ID: 5, Reason: 0x11}},
		{"publish expiry", &packet.Publish{QoS: 1, PacketID: 1, Topic: []byte("t"), Payload: []byte("m"),
			Props: packet.Properties{Present: packet.PropSet(0).With(packet.PropMessageExpiry), MessageExpiry: 30}},
			model.Packet{Type: 3, ID: 1, QoS: 1, Topic: "t", Payload: "m", Msg: "id:m", Expiry: 30}},
		{"connect will", &packet.Connect{KeepAlive: 10, Will: &packet.Will{QoS: 1, Retain: true, Topic: "w", Payload: []byte("bye"),
			Props: packet.Properties{Present: packet.PropSet(0).With(packet.PropWillDelay), WillDelay: 5}},
			Props: packet.Properties{Present: packet.PropSet(0).With(packet.PropSessionExpiry), SessionExpiry: 60}},
			model.Packet{Type: 1, KeepAlive: 10, Expiry: 60, Will: true, QoS: 1, Retain: true, Topic: "w", Payload: "bye", Msg: "id:bye", WillDelay: 5}},
		{"connack", &packet.Connack{SessionPresent: true}, model.Packet{Type: 2, Sessions: true}},
		{"connect max size", &packet.Connect{Props: packet.Properties{Present: packet.PropSet(0).With(packet.PropMaximumPacketSize), MaximumPacketSize: 300}},
			model.Packet{Type: 1, MaxSize: 300}},
		{"connack server keep alive", &packet.Connack{Props: packet.Properties{Present: packet.PropSet(0).With(packet.PropServerKeepAlive), ServerKeepAlive: 30}},
			model.Packet{Type: 2, KeepAlive: 30}},
		{"disconnect expiry", &packet.Disconnect{Props: packet.Properties{Present: packet.PropSet(0).With(packet.PropSessionExpiry), SessionExpiry: 7}}, model.Packet{Type: 14, Expiry: 7, ExpirySet: true}},
		{"publish subids", &packet.Publish{QoS: 1, PacketID: 1, Topic: []byte("t"), Payload: []byte("m"), Props: packet.Properties{SubscriptionIDs: []uint32{7, 9}}},
			model.Packet{Type: 3, ID: 1, QoS: 1, Topic: "t", Payload: "m", Msg: "id:m", SubIDs: []uint32{7, 9}}},
		{"subscribe subid", &packet.Subscribe{PacketID: 2, Subs: []packet.Subscription{{Filter: "t/#", QoS: 1}}, Props: packet.Properties{SubscriptionIDs: []uint32{7}}},
			model.Packet{Type: 8, ID: 2, Filter: "t/#", QoS: 1, SubIDs: []uint32{7}}},
		{"disconnect", &packet.Disconnect{Reason: packet.ServerShuttingDown}, model.Packet{Type: 14, Reason: 0x8B}},
	}
	for _, c := range cases {
		if got := Of(c.in, str, id); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: got %+v, want %+v", c.name, got, c.want)
		}
	}
}
