package packet

import (
	"strings"
	"testing"
)

func TestReasonCodeStrings(t *testing.T) {
	all := []ReasonCode{Success, GrantedQoS1, GrantedQoS2, DisconnectWithWill, NoMatchingSubscribers,
		NoSubscriptionExisted, ContinueAuthentication, ReAuthenticate, UnspecifiedError, MalformedPacket,
		ProtocolError, ImplementationSpecificError, UnsupportedProtocolVersion, ClientIdentifierNotValid,
		BadUserNameOrPassword, NotAuthorized, ServerUnavailable, ServerBusy, Banned, ServerShuttingDown,
		BadAuthenticationMethod, KeepAliveTimeout, SessionTakenOver, TopicFilterInvalid, TopicNameInvalid,
		PacketIdentifierInUse, PacketIdentifierNotFound, ReceiveMaximumExceeded, TopicAliasInvalid,
		PacketTooLarge, MessageRateTooHigh, QuotaExceeded, AdministrativeAction, PayloadFormatInvalid,
		RetainNotSupported, QoSNotSupported, UseAnotherServer, ServerMoved, SharedSubsNotSupported,
		ConnectionRateExceeded, MaximumConnectTime, SubIDsNotSupported, WildcardSubsNotSupported,
		V3ServerUnavailable, V3NotAuthorized}
	seen := map[string]ReasonCode{}
	for _, c := range all {
		s := c.String()
		if strings.HasPrefix(s, "ReasonCode(") {
			t.Errorf("%#x has no name", byte(c))
		}
		if prev, ok := seen[s]; ok && prev != c {
			t.Errorf("%#x and %#x share the name %q", byte(prev), byte(c), s)
		}
		seen[s] = c
	}
	// Every code valid in some v5 packet is named.
	for c := 0; c < 256; c++ {
		named := !strings.HasPrefix(ReasonCode(c).String(), "ReasonCode(")
		valid := false
		for t := range validReasons {
			valid = valid || validReasons[t].has(ReasonCode(c))
		}
		if valid && !named {
			t.Errorf("valid code %#x has no name", c)
		}
	}
	if got := ReasonCode(0x42).String(); got != "ReasonCode(0x42)" {
		t.Errorf("unknown code: %q", got)
	}
	if got := PacketIdentifierNotFound.String(); got != "Packet Identifier not found" {
		t.Errorf("0x92: %q", got)
	}
}

func TestTypeAndVersionStrings(t *testing.T) {
	want := []string{"", "CONNECT", "CONNACK", "PUBLISH", "PUBACK", "PUBREC", "PUBREL", "PUBCOMP",
		"SUBSCRIBE", "SUBACK", "UNSUBSCRIBE", "UNSUBACK", "PINGREQ", "PINGRESP", "DISCONNECT", "AUTH"}
	for i := 1; i < len(want); i++ {
		if got := Type(i).String(); got != want[i] {
			t.Errorf("Type(%d) = %q, want %q", i, got, want[i])
		}
	}
	if Type(16).String() != "Type(16)" || V311.String() != "3.1.1" || V5.String() != "5.0" || Version(3).String() != "Version(3)" {
		t.Errorf("fallback names wrong")
	}
	for _, id := range propOrder {
		if strings.HasPrefix(id.String(), "PropID(") {
			t.Errorf("property %#x has no name", byte(id))
		}
	}
}

func TestEqualTreatsNilAndEmptyAlike(t *testing.T) {
	a := &Publish{Topic: b("t"), Payload: nil}
	c := &Publish{Topic: b("t"), Payload: []byte{}}
	if !Equal(a, c) {
		t.Error("nil and empty payload differ")
	}
	if Equal(a, &Publish{Topic: b("t"), Payload: b("x")}) || Equal(a, &Puback{}) || Equal(a, nil) || !Equal(nil, nil) {
		t.Error("Equal too lenient")
	}
	w1 := &Connect{Will: &Will{Topic: "w"}}
	w2 := &Connect{Will: &Will{Topic: "w", Payload: []byte{}, Props: Properties{User: []UserProperty{}}}}
	if !Equal(w1, w2) || Equal(w1, &Connect{}) {
		t.Error("Equal on wills wrong")
	}
}

// TestZeroAllocs checks the allocation contract: PUBLISH decode into a
// caller's struct and encoding into a buffer with room allocate nothing.
func TestZeroAllocs(t *testing.T) {
	pub := &Publish{QoS: 1, PacketID: 7, Topic: b("sensors/room1/temperature"), Payload: make([]byte, 16)}
	buf := make([]byte, 0, 256)
	for _, v := range []Version{V311, V5} {
		wire, err := Append(nil, v, pub)
		if err != nil {
			t.Fatal(err)
		}
		var p Publish
		if n := testing.AllocsPerRun(100, func() {
			if _, err := DecodePublish(v, wire, &p); err != nil {
				t.Fatal(err)
			}
		}); n != 0 {
			t.Errorf("%v DecodePublish allocates %.1f times", v, n)
		}
		for _, pk := range []Packet{pub, &Puback{PacketID: 1}, &Subscribe{PacketID: 1, Subs: []Subscription{{Filter: "a/+"}}},
			&Connect{Version: v, ClientID: "c"}, &Suback{PacketID: 1, Reasons: []ReasonCode{1}}} {
			if n := testing.AllocsPerRun(100, func() {
				if _, err := Append(buf[:0], v, pk); err != nil {
					t.Fatal(err)
				}
			}); n != 0 {
				t.Errorf("%v Append(%T) allocates %.1f times", v, pk, n)
			}
		}
	}
}

// TestPlainASCII checks the eight-bytes-at-a-time scan against a byte loop at
// every position and length.
func TestPlainASCII(t *testing.T) {
	for n := 0; n <= 20; n++ {
		for pos := 0; pos < n; pos++ {
			for _, c := range []byte{0, '+', '#', 0x80, 0xFF, 'a', '/', 0x7F} {
				s := []byte(strings.Repeat("ab/", 7))[:n]
				s[pos] = c
				for _, noWild := range []bool{false, true} {
					want := true
					for _, x := range s {
						if x >= 0x80 || x == 0 || (noWild && (x == '+' || x == '#')) {
							want = false
						}
					}
					if got := plainASCII(s, noWild); got != want {
						t.Fatalf("plainASCII(% x, %v) = %v, want %v", s, noWild, got, want)
					}
				}
			}
		}
	}
}
