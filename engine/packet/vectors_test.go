package packet

import (
	"bytes"
	"testing"
)

// vector is one packet with its exact wire form.
type vector struct {
	name string
	v    Version
	p    Packet
	wire string // hex, with 'ascii' runs
}

// vectors covers every packet type in both versions, including the examples
// of the standards. Each encodes to wire and decodes back to p.
var vectors = []vector{
	// 3.1.1
	{"v4 CONNECT minimal", V311, &Connect{Version: V311, ClientID: "c", CleanStart: true, KeepAlive: 60},
		"10 0D 0004'MQTT' 04 02 003C 0001'c'"},
	// 3.1.1 §3.1.2.10 example variable header: name MQTT, level 4, flags CE, keep alive 10.
	{"v4 CONNECT §3.1.2.10 example", V311, &Connect{Version: V311, ClientID: "id", CleanStart: true, KeepAlive: 10,
		Will: &Will{QoS: 1, Topic: "wt", Payload: b("wm")}, HasUsername: true, Username: "u", HasPassword: true, Password: b("p")},
		"10 1C 0004'MQTT' 04 CE 000A 0002'id' 0002'wt' 0002'wm' 0001'u' 0001'p'"},
	{"v4 CONNECT will retain QoS2", V311, &Connect{Version: V311, ClientID: "", CleanStart: true,
		Will: &Will{QoS: 2, Retain: true, Topic: "w", Payload: nil}},
		"10 11 0004'MQTT' 04 36 0000 0000 0001'w' 0000"},
	{"v4 CONNACK session present", V311, &Connack{SessionPresent: true}, "20 02 01 00"},
	{"v4 CONNACK not authorized", V311, &Connack{Reason: V3NotAuthorized}, "20 02 00 05"},
	{"v4 PUBLISH QoS0", V311, &Publish{Topic: b("a/b"), Payload: b("hi")}, "30 07 0003'a/b' 'hi'"},
	{"v4 PUBLISH QoS1 dup retain", V311, &Publish{Dup: true, QoS: 1, Retain: true, Topic: b("t"), PacketID: 0x1234, Payload: b("x")},
		"3B 06 0001't' 1234 'x'"},
	{"v4 PUBLISH QoS2 empty payload", V311, &Publish{QoS: 2, Topic: b("t"), PacketID: 1}, "34 05 0001't' 0001"},
	{"v4 PUBLISH utf8 topic", V311, &Publish{Topic: b("é/世")}, "30 08 0006 C3A9 2F E4B896"},
	{"v4 PUBACK", V311, &Puback{PacketID: 1}, "40 02 0001"},
	{"v4 PUBREC", V311, &Pubrec{PacketID: 2}, "50 02 0002"},
	{"v4 PUBREL", V311, &Pubrel{PacketID: 3}, "62 02 0003"},
	{"v4 PUBCOMP", V311, &Pubcomp{PacketID: 4}, "70 02 0004"},
	{"v4 SUBSCRIBE", V311, &Subscribe{PacketID: 10, Subs: []Subscription{{Filter: "a/#", QoS: 1}, {Filter: "+/b", QoS: 2}}},
		"82 0E 000A 0003'a/#' 01 0003'+/b' 02"},
	{"v4 SUBSCRIBE # and + alone", V311, &Subscribe{PacketID: 1, Subs: []Subscription{{Filter: "#"}, {Filter: "+"}, {Filter: "$share/g/a"}}},
		"82 17 0001 0001'#' 00 0001'+' 00 000A'$share/g/a' 00"},
	{"v4 SUBACK", V311, &Suback{PacketID: 10, Reasons: []ReasonCode{1, 2, V3SubackFailure}}, "90 05 000A 01 02 80"},
	{"v4 UNSUBSCRIBE", V311, &Unsubscribe{PacketID: 11, Filters: []string{"a/#"}}, "A2 07 000B 0003'a/#'"},
	{"v4 UNSUBACK", V311, &Unsuback{PacketID: 11}, "B0 02 000B"},
	{"v4 PINGREQ", V311, &Pingreq{}, "C0 00"},
	{"v4 PINGRESP", V311, &Pingresp{}, "D0 00"},
	{"v4 DISCONNECT", V311, &Disconnect{}, "E0 00"},

	// 5.0
	{"v5 CONNECT minimal", V5, &Connect{Version: V5, ClientID: "c", CleanStart: true, KeepAlive: 60},
		"10 0E 0004'MQTT' 05 02 003C 00 0001'c'"},
	// 5.0 §3.1.2.12 example variable header: flags CE, keep alive 10, Session Expiry Interval 10.
	{"v5 CONNECT §3.1.2.12 example", V5, &Connect{Version: V5, ClientID: "id", CleanStart: true, KeepAlive: 10,
		Props: Properties{Present: props(PropSessionExpiry), SessionExpiry: 10},
		Will:  &Will{QoS: 1, Topic: "wt", Payload: b("wm")}, HasUsername: true, Username: "u", HasPassword: true, Password: b("p")},
		"10 23 0004'MQTT' 05 CE 000A 05 11 0000000A 0002'id' 00 0002'wt' 0002'wm' 0001'u' 0001'p'"},
	{"v5 CONNECT password without user name", V5, &Connect{Version: V5, ClientID: "c", HasPassword: true, Password: b("pw"),
		Props: Properties{Present: props(PropReceiveMaximum, PropMaximumPacketSize, PropAuthMethod, PropAuthData),
			ReceiveMaximum: 20, MaximumPacketSize: 1024, AuthMethod: "m", AuthData: b("d")}},
		"10 22 0004'MQTT' 05 40 0000 10 15 0001'm' 16 0001'd' 21 0014 27 00000400 0001'c' 0002'pw'"},
	{"v5 CONNECT will properties", V5, &Connect{Version: V5, ClientID: "c",
		Will: &Will{Topic: "w", Payload: b("x"), Props: Properties{Present: props(PropWillDelay, PropPayloadFormat, PropResponseTopic),
			WillDelay: 5, PayloadFormat: 1, ResponseTopic: "r/t"}}},
		"10 22 0004'MQTT' 05 04 0000 00 0001'c' 0D 01 01 08 0003'r/t' 18 00000005 0001'w' 0001'x'"},
	{"v5 CONNACK minimal", V5, &Connack{}, "20 03 00 00 00"},
	{"v5 CONNACK properties", V5, &Connack{Props: Properties{Present: props(PropReceiveMaximum, PropTopicAliasMaximum, PropMaximumQoS),
		ReceiveMaximum: 10, TopicAliasMaximum: 5, MaximumQoS: 1}},
		"20 0B 00 00 08 21 000A 22 0005 24 01"},
	{"v5 CONNACK not authorized", V5, &Connack{Reason: NotAuthorized}, "20 03 00 87 00"},
	{"v5 PUBLISH QoS1 properties", V5, &Publish{QoS: 1, Topic: b("a"), PacketID: 1, Payload: b("hi"),
		Props: Properties{Present: props(PropPayloadFormat, PropTopicAlias), PayloadFormat: 1, TopicAlias: 3,
			User: []UserProperty{{"k", "v"}}}},
		"32 14 0001'a' 0001 0C 01 01 23 0003 26 0001'k' 0001'v' 'hi'"},
	{"v5 PUBLISH alias only", V5, &Publish{Props: Properties{Present: props(PropTopicAlias), TopicAlias: 7}},
		"30 06 0000 03 23 0007"},
	{"v5 PUBLISH subscription ids", V5, &Publish{Topic: b("t"), Props: Properties{SubscriptionIDs: []uint32{1, 200}}},
		"30 09 0001't' 05 0B 01 0B C801"},
	{"v5 PUBLISH every PUBLISH property", V5, &Publish{Topic: b("t"), Props: Properties{
		Present:       props(PropMessageExpiry, PropContentType, PropResponseTopic, PropCorrelationData),
		MessageExpiry: 60, ContentType: "ct", ResponseTopic: "rt", CorrelationData: b("cd")}},
		"30 18 0001't' 14 02 0000003C 03 0002'ct' 08 0002'rt' 09 0002'cd'"},
	{"v5 PUBACK short", V5, &Puback{PacketID: 1}, "40 02 0001"},
	{"v5 PUBACK reason only", V5, &Puback{PacketID: 1, Reason: NoMatchingSubscribers}, "40 03 0001 10"},
	{"v5 PUBACK reason string", V5, &Puback{PacketID: 1, Reason: NotAuthorized,
		Props: Properties{Present: props(PropReasonString), ReasonString: "x"}}, "40 08 0001 87 04 1F 0001'x'"},
	{"v5 PUBACK success with property", V5, &Puback{PacketID: 1, Props: Properties{User: []UserProperty{{"", ""}}}},
		"40 09 0001 00 05 26 0000 0000"},
	{"v5 PUBREC", V5, &Pubrec{PacketID: 9}, "50 02 0009"},
	{"v5 PUBREL not found", V5, &Pubrel{PacketID: 5, Reason: PacketIdentifierNotFound}, "62 03 0005 92"},
	{"v5 PUBCOMP not found", V5, &Pubcomp{PacketID: 5, Reason: PacketIdentifierNotFound}, "70 03 0005 92"},
	{"v5 SUBSCRIBE options and shared", V5, &Subscribe{PacketID: 10, Props: Properties{SubscriptionIDs: []uint32{7}},
		Subs: []Subscription{{Filter: "a/#", QoS: 1, NoLocal: true, RetainAsPublished: true, RetainHandling: 2},
			{Filter: "$share/g/x", QoS: 2, RetainHandling: 1}}},
		"82 18 000A 02 0B 07 0003'a/#' 2D 000A'$share/g/x' 12"},
	{"v5 SUBACK", V5, &Suback{PacketID: 10, Reasons: []ReasonCode{GrantedQoS0, GrantedQoS2, TopicFilterInvalid}},
		"90 06 000A 00 00 02 8F"},
	{"v5 UNSUBSCRIBE", V5, &Unsubscribe{PacketID: 11, Filters: []string{"a/#"}}, "A2 08 000B 00 0003'a/#'"},
	{"v5 UNSUBACK", V5, &Unsuback{PacketID: 11, Reasons: []ReasonCode{Success, NoSubscriptionExisted}}, "B0 05 000B 00 00 11"},
	{"v5 PINGREQ", V5, &Pingreq{}, "C0 00"},
	{"v5 PINGRESP", V5, &Pingresp{}, "D0 00"},
	{"v5 DISCONNECT normal", V5, &Disconnect{}, "E0 00"},
	{"v5 DISCONNECT with will", V5, &Disconnect{Reason: DisconnectWithWill}, "E0 01 04"},
	{"v5 DISCONNECT reason string", V5, &Disconnect{Reason: SessionTakenOver,
		Props: Properties{Present: props(PropReasonString), ReasonString: "x"}}, "E0 06 8E 04 1F 0001'x'"},
	{"v5 AUTH short", V5, &Auth{}, "F0 00"},
	{"v5 AUTH continue", V5, &Auth{Reason: ContinueAuthentication, Props: Properties{Present: props(PropAuthMethod), AuthMethod: "m"}},
		"F0 06 18 04 15 0001'm'"},
}

// decodeOnly are valid non-shortest forms: they decode to p, and p encodes
// to the shorter form.
var decodeOnly = []vector{
	{"v5 PUBACK explicit success, empty properties", V5, &Puback{PacketID: 1}, "40 04 0001 00 00"},
	{"v5 PUBACK explicit success, no properties", V5, &Puback{PacketID: 1}, "40 03 0001 00"},
	{"v5 PUBCOMP explicit success", V5, &Pubcomp{PacketID: 2}, "70 03 0002 00"},
	{"v5 PUBREL reason, empty properties", V5, &Pubrel{PacketID: 1, Reason: PacketIdentifierNotFound}, "62 04 0001 92 00"},
	{"v5 DISCONNECT explicit normal", V5, &Disconnect{}, "E0 02 00 00"},
	{"v5 DISCONNECT reason only zero", V5, &Disconnect{}, "E0 01 00"},
	{"v5 AUTH explicit success", V5, &Auth{}, "F0 02 00 00"},
}

func TestVectorsEncode(t *testing.T) {
	for _, tc := range vectors {
		got, err := Append(nil, tc.v, tc.p)
		if err != nil {
			t.Errorf("%s: Append: %v", tc.name, err)
			continue
		}
		if want := h(t, tc.wire); !bytes.Equal(got, want) {
			t.Errorf("%s: Append\n got % x\nwant % x", tc.name, got, want)
		}
	}
}

func TestVectorsDecode(t *testing.T) {
	for _, tc := range append(append([]vector(nil), vectors...), decodeOnly...) {
		wire := h(t, tc.wire)
		p, n, err := Decode(tc.v, wire, 0)
		if err != nil {
			t.Errorf("%s: Decode: %v", tc.name, err)
			continue
		}
		if n != len(wire) {
			t.Errorf("%s: Decode used %d of %d bytes", tc.name, n, len(wire))
		}
		if !Equal(p, tc.p) {
			t.Errorf("%s: Decode\n got %#v\nwant %#v", tc.name, p, tc.p)
		}
		if _, _, err := Decode(tc.v, wire[:len(wire)-1], 0); err != ErrIncomplete {
			t.Errorf("%s: Decode of all but the last byte: %v, want ErrIncomplete", tc.name, err)
		}
	}
}

// TestDecodeUnknownVersionConnect checks that version 0 accepts CONNECT of
// either level.
func TestDecodeUnknownVersionConnect(t *testing.T) {
	for _, tc := range vectors {
		if tc.p.Type() != CONNECT {
			continue
		}
		p, _, err := Decode(0, h(t, tc.wire), 0)
		if err != nil || !Equal(p, tc.p) {
			t.Errorf("%s: Decode(0): %v %#v", tc.name, err, p)
		}
	}
}

func TestDecodePublishAliasesAndResets(t *testing.T) {
	wire := h(t, "32 14 0001'a' 0001 0C 01 01 23 0003 26 0001'k' 0001'v' 'hi'")
	p := Publish{Dup: true, Payload: b("old"), Props: Properties{ContentType: "stale", Present: props(PropContentType)}}
	n, err := DecodePublish(V5, wire, &p)
	if err != nil || n != len(wire) {
		t.Fatalf("DecodePublish: %d %v", n, err)
	}
	want := vectors[0]
	for _, v := range vectors {
		if v.name == "v5 PUBLISH QoS1 properties" {
			want = v
		}
	}
	if !Equal(&p, want.p) {
		t.Fatalf("got %#v", p)
	}
	wire[len(wire)-1] = 'X'
	if string(p.Payload) != "hX" {
		t.Errorf("payload does not alias the input: %q", p.Payload)
	}
	if _, err := DecodePublish(V5, h(t, "40 02 0001"), &p); err == nil {
		t.Errorf("DecodePublish accepted a PUBACK")
	}
	if _, err := DecodePublish(V5, wire[:5], &p); err != ErrIncomplete {
		t.Errorf("DecodePublish of a prefix: %v", err)
	}
}

// TestRemainingLengthBoundaries checks the Variable Byte Integer table of
// 3.1.1 §2.2.3 / 5.0 §1.5.5 at every boundary.
func TestRemainingLengthBoundaries(t *testing.T) {
	for _, tc := range []struct {
		n    int
		wire string
	}{
		{0, "00"}, {127, "7F"}, {128, "80 01"}, {16_383, "FF 7F"}, {16_384, "80 80 01"},
		{2_097_151, "FF FF 7F"}, {2_097_152, "80 80 80 01"}, {268_435_455, "FF FF FF 7F"},
	} {
		want := h(t, tc.wire)
		if got := appendVBI(nil, tc.n); !bytes.Equal(got, want) || vbiLen(tc.n) != len(want) {
			t.Errorf("appendVBI(%d) = % x (len %d), want % x", tc.n, got, vbiLen(tc.n), want)
		}
		for _, v := range []Version{V311, V5} {
			got, used, err := readVBI(v, want)
			if err != nil || got != tc.n || used != len(want) {
				t.Errorf("readVBI(% x) = %d, %d, %v", want, got, used, err)
			}
		}
	}
}

// TestRemainingLengthPackets encodes and decodes whole PUBLISH packets whose
// Remaining Length sits on each boundary that fits in memory.
func TestRemainingLengthPackets(t *testing.T) {
	for _, rl := range []int{3, 127, 128, 16_383, 16_384, 2_097_151, 2_097_152} {
		p := &Publish{Topic: b("t"), Payload: make([]byte, rl-3)}
		wire, err := Append(nil, V311, p)
		if err != nil {
			t.Fatalf("rl %d: %v", rl, err)
		}
		if hdr := 1 + vbiLen(rl); len(wire) != hdr+rl || !bytes.Equal(wire[1:hdr], appendVBI(nil, rl)) {
			t.Fatalf("rl %d: header % x, length %d", rl, wire[:hdr], len(wire))
		}
		q, n, err := Decode(V311, wire, 0)
		if err != nil || n != len(wire) || !Equal(p, q) {
			t.Fatalf("rl %d: decode %v, %d", rl, err, n)
		}
	}
	// The largest Remaining Length: the header alone decodes as incomplete.
	if _, _, err := Decode(V311, h(t, "30 FF FF FF 7F 00 01 't'"), 0); err != ErrIncomplete {
		t.Errorf("268435455: %v, want ErrIncomplete", err)
	}
	big := &Publish{Topic: b("t"), Payload: make([]byte, maxRemaining-2)}
	if _, err := Append(nil, V311, big); err == nil {
		t.Errorf("Append of a packet over 268,435,455 bytes of Remaining Length succeeded")
	}
}

func TestAppendKeepsPrefix(t *testing.T) {
	for _, tc := range vectors {
		got, err := Append([]byte("pre"), tc.v, tc.p)
		if err != nil || !bytes.Equal(got, append([]byte("pre"), h(t, tc.wire)...)) {
			t.Errorf("%s: % x %v", tc.name, got, err)
		}
	}
}
