package engine

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/mqttlab/mqttlab/engine/packet"
)

// connected returns a harness whose client completed a CONNACK.
func connected(t *testing.T, cfg ClientConfig, sp bool) *harness {
	t.Helper()
	h := newHarness(t, cfg)
	h.step(Connect{Cmd: 100})
	h.conn++
	h.step(ConnOpened{Conn: h.conn})
	h.recv(&packet.Connack{SessionPresent: sp})
	if !h.c.Connected() {
		t.Fatalf("not connected: %v", h.summarize(h.acts))
	}
	return h
}

// reconnect opens a new connection and feeds CONNACK with sp.
func (h *harness) reconnect(sp bool) []string {
	h.step(Connect{Cmd: 101})
	h.conn++
	h.step(ConnOpened{Conn: h.conn})
	return h.summarize(h.recv(&packet.Connack{SessionPresent: sp}))
}

func indexOf(lines []string, prefix string) int {
	return slices.IndexFunc(lines, func(s string) bool { return strings.HasPrefix(s, prefix) })
}

func fixedConfig(t *testing.T) ClientConfig {
	p, err := PresetByName("fixed")
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultClientConfig("c1", p.Client)
	cfg.KeepAlive = 0
	return cfg
}

// TestSeedRetransmitDurableRebootResends: seed (a), fixed. The script
// reboots with unacked QoS1/QoS2 publishes and checks the resend.
func TestSeedRetransmitDurableRebootResends(t *testing.T) {
	runScript(t, "testdata/client/seed_retransmit_durable.txt")
}

// TestSeedRetransmitDurableStoreBeforeSend: the copy is Put with Sync and
// DUP set before Accepted and before the first send, which has DUP=0.
func TestSeedRetransmitDurableStoreBeforeSend(t *testing.T) {
	h := connected(t, fixedConfig(t), false)
	acts := h.step(Publish{Cmd: 1, Topic: "t", Payload: []byte("p"), QoS: 1})
	got := h.summarize(acts)
	want := []string{"put out/00001", "complete 1 accepted", "send PUBLISH q=1 id=1 dup=0 topic=t payload=p"}
	if !slices.Equal(got, want) {
		t.Fatalf("actions %q, want %q", got, want)
	}
	put := acts[0].(Persist)
	if !put.Sync {
		t.Fatal("the stored copy is not synced")
	}
	m, err := clientDecodeOut(packet.V5, 1, put.Value)
	if err != nil {
		t.Fatal(err)
	}
	if put.Value[len(put.Value)-len(m.wire)]&clientDupFlag == 0 {
		t.Fatal("the stored PUBLISH does not have DUP set")
	}
}

// TestSeedRetransmitDurableOrderBySequence: after the ids wrap, key order
// (out/00001 first) differs from send order; the resend follows the
// records' sequence numbers.
func TestSeedRetransmitDurableOrderBySequence(t *testing.T) {
	h := connected(t, fixedConfig(t), false)
	h.c.out.ids.SetLast(65533)
	for i, payload := range []string{"a", "b", "c"} {
		h.step(Publish{Cmd: CmdID(i + 1), Topic: "t", Payload: []byte(payload), QoS: 1})
	}
	h.step(ConnClosed{Conn: h.conn})
	h.reboot()
	got := h.reconnect(true)
	want := []string{
		"send PUBLISH q=1 id=65534 dup=1 topic=t payload=a",
		"send PUBLISH q=1 id=65535 dup=1 topic=t payload=b",
		"send PUBLISH q=1 id=1 dup=1 topic=t payload=c",
	}
	if !slices.Equal(got[len(got)-3:], want) {
		t.Fatalf("resend %q, want %q", got, want)
	}
	// the restored allocator continues after the last id: 2, not a reused one
	acts := h.summarize(h.step(Publish{Cmd: 9, Topic: "t", QoS: 1}))
	if !slices.Contains(acts, "send PUBLISH q=1 id=2 dup=0 topic=t payload=") {
		t.Fatalf("next publish after restore: %q", acts)
	}
}

// TestSeedRetransmitDurableCleanSessionDeletesRecords: a clean start after
// the reboot deletes every record.
func TestSeedRetransmitDurableCleanSessionDeletesRecords(t *testing.T) {
	h := runScript(t, "testdata/client/seed_retransmit_durable_clean.txt")
	for _, r := range h.records() {
		if strings.HasPrefix(r.Key, "out/00001") || strings.HasPrefix(r.Key, "out/00002") {
			t.Fatalf("record %s of the discarded session survived", r.Key)
		}
	}
}

// TestSeedRetransmitLegacyNeverResent: seed (a), legacy. The unacked
// messages are never resent and never complete.
func TestSeedRetransmitLegacyNeverResent(t *testing.T) {
	runScript(t, "testdata/client/seed_retransmit_legacy.txt")
	p, _ := PresetByName("legacy-retransmit")
	cfg := DefaultClientConfig("c1", p.Client)
	h := connected(t, cfg, false)
	h.step(Publish{Cmd: 1, Topic: "t", Payload: []byte("p"), QoS: 1})
	h.step(ConnClosed{Conn: h.conn})
	got := h.reconnect(true)
	if i := indexOf(got, "send PUBLISH"); i >= 0 {
		t.Fatalf("legacy resent: %q", got)
	}
	if i := indexOf(got, "complete 1 "); i >= 0 {
		t.Fatalf("legacy completed the lost message: %q", got)
	}
}

// TestSeedRetransmitMemory: copies survive a reconnect, not a reboot.
func TestSeedRetransmitMemory(t *testing.T) {
	runScript(t, "testdata/client/seed_retransmit_memory.txt")
}

// TestSeedUnknownPubrelAnswered: seed (b), fixed: PUBCOMP 0x92 and the
// session keeps working.
func TestSeedUnknownPubrelAnswered(t *testing.T) {
	runScript(t, "testdata/client/seed_unknown_pubrel_fixed.txt")
}

// TestSeedUnknownPubrelLegacyStuck: seed (b), legacy: stuck forever.
func TestSeedUnknownPubrelLegacyStuck(t *testing.T) {
	h := runScript(t, "testdata/client/seed_unknown_pubrel_legacy.txt")
	// every later receive fails and nothing is ever sent again
	for i := 0; i < 3; i++ {
		acts := h.step(BytesReceived{Conn: h.conn, Data: []byte{0xd0, 0x00}})
		if len(acts) != 1 || acts[0].(Complete).Result != Failed {
			t.Fatalf("stuck client returned %q", h.summarize(acts))
		}
	}
}

// TestSeedUnknownPubrelV311: 3.1.1 answers with plain PUBCOMP/PUBREL.
func TestSeedUnknownPubrelV311(t *testing.T) {
	runScript(t, "testdata/client/seed_unknown_pubrel_v311.txt")
}

// TestSeedUnknownPubrecAnswered and ...LegacyStuck: the symmetric PUBREC case.
func TestSeedUnknownPubrecAnswered(t *testing.T) {
	runScript(t, "testdata/client/seed_unknown_pubrec.txt")
}

func TestSeedUnknownPubrecLegacyStuck(t *testing.T) {
	runScript(t, "testdata/client/seed_unknown_pubrec_legacy.txt")
}

// TestSeedAckOrderAfterCallback: seed (c), fixed: nothing is acknowledged
// before the application's Ack.
func TestSeedAckOrderAfterCallback(t *testing.T) {
	runScript(t, "testdata/client/seed_ack_order_after.txt")
	h := connected(t, fixedConfig(t), false)
	for _, q := range []packet.QoS{1, 2} {
		got := h.summarize(h.recv(&packet.Publish{QoS: q, PacketID: uint16(q), Topic: []byte("a")}))
		if indexOf(got, "send") >= 0 || indexOf(got, "deliver") < 0 {
			t.Fatalf("QoS %d before the Ack: %q", q, got)
		}
		did := h.acts[0].(Deliver).Delivery
		got = h.summarize(h.step(Ack{Delivery: did}))
		if indexOf(got, "send PUB") < 0 {
			t.Fatalf("QoS %d after the Ack: %q", q, got)
		}
	}
}

// TestSeedAckOrderBeforeCallback: seed (c), legacy: the ack precedes the
// delivery.
func TestSeedAckOrderBeforeCallback(t *testing.T) {
	runScript(t, "testdata/client/seed_ack_order_before.txt")
	p, _ := PresetByName("legacy-ack-order")
	h := connected(t, DefaultClientConfig("c1", p.Client), false)
	for _, q := range []packet.QoS{1, 2} {
		got := h.summarize(h.recv(&packet.Publish{QoS: q, PacketID: uint16(q), Topic: []byte("a")}))
		if s, d := indexOf(got, "send PUB"), indexOf(got, "deliver"); s < 0 || d < 0 || s > d {
			t.Fatalf("QoS %d: want ack before deliver, got %q", q, got)
		}
	}
}

// TestQoS2DurableAcrossReboot and TestQoS2VolatileDuplicates: the
// IncomingQoS2 policy.
func TestQoS2DurableAcrossReboot(t *testing.T) {
	runScript(t, "testdata/client/qos2_durable_reboot.txt")
}

func TestQoS2VolatileDuplicates(t *testing.T) {
	runScript(t, "testdata/client/qos2_volatile_reboot.txt")
}

// mutationRun drives one scenario that touches every client mutation and
// returns the actions of the whole run.
func mutationRun(t *testing.T, m Mutation) []string {
	cfg := fixedConfig(t)
	cfg.Policy.Mutations = m
	h := connected(t, cfg, false)
	var all []string
	step := func(ev Event) { all = append(all, h.summarize(h.step(ev))...) }
	step(Publish{Cmd: 1, Topic: "t", Payload: []byte("1"), QoS: 2})
	all = append(all, h.summarize(h.recv(&packet.Pubrec{PacketID: 1}))...)
	step(Publish{Cmd: 2, Topic: "t", Payload: []byte("2"), QoS: 1})
	step(Publish{Cmd: 3, Topic: "t", Payload: []byte("3"), QoS: 1})
	step(ConnClosed{Conn: h.conn})
	all = append(all, h.reconnect(true)...)
	return all
}

// TestClientMutations: each mutation's deviation happens with it and not
// without it.
func TestClientMutations(t *testing.T) {
	base := mutationRun(t, 0)
	cases := []struct {
		name      string
		m         Mutation
		deviation func([]string) bool
	}{
		{"MutDeleteBeforeUpdate", MutDeleteBeforeUpdate, func(a []string) bool {
			i := slices.Index(a, "del out/00001")
			return i >= 0 && i+1 < len(a) && a[i+1] == "put out/00001"
		}},
		{"MutResendWithoutDup", MutResendWithoutDup, func(a []string) bool {
			n := 0
			for _, s := range a {
				if s == "send PUBLISH q=1 id=2 dup=0 topic=t payload=2" {
					n++
				}
			}
			return n == 2 // the first send and the resend
		}},
		{"MutReuseInflightID", MutReuseInflightID, func(a []string) bool {
			// id 1 is in flight (PUBREL sent) when message 2 gets it
			return slices.Contains(a, "send PUBLISH q=1 id=1 dup=0 topic=t payload=2")
		}},
		{"MutPublishAfterPubrel", MutPublishAfterPubrel, func(a []string) bool {
			return slices.Contains(a, "send PUBLISH q=2 id=1 dup=1 topic=t payload=1")
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.deviation(base) {
				t.Fatalf("deviation present without the mutation: %q", base)
			}
			if got := mutationRun(t, c.m); !c.deviation(got) {
				t.Fatalf("deviation missing with the mutation: %q", got)
			}
		})
	}
	for _, f := range []string{"mut_delete_before_update", "mut_resend_without_dup", "mut_reuse_inflight_id", "mut_publish_after_pubrel"} {
		t.Run("script/"+f, func(t *testing.T) { runScript(t, "testdata/client/"+f+".txt") })
	}
}

// TestSessionLostFlows: what Session Present 0 with Clean Start 0 does to
// each outgoing message by its QoS and how far its flow got in the lost
// session [MQTT-3.2.2-5]. A QoS 2 message whose PUBLISH left (or may have:
// restored after a reboot) fails, since the broker may have routed it and
// a new PUBLISH of it would be delivered again [MQTT-4.3.3-10]; so does a
// PUBREC'd one. QoS 1 messages and QoS 2 messages never sent are published
// again as new messages (DUP=0). MutRepublishLostQoS2 republishes the sent
// QoS 2 message too.
func TestSessionLostFlows(t *testing.T) {
	const republished, failed = "republished", "failed"
	cases := []struct {
		name string
		qos  packet.QoS
		flow string // unsent, sent, rebooted (sent, then the client rebooted), released (PUBREC received)
		mut  Mutation
		want string
	}{
		{"qos1 sent", 1, "sent", 0, republished},
		{"qos1 unsent", 1, "unsent", 0, republished},
		{"qos1 rebooted", 1, "rebooted", 0, republished},
		{"qos2 unsent", 2, "unsent", 0, republished},
		{"qos2 sent", 2, "sent", 0, failed},
		{"qos2 rebooted", 2, "rebooted", 0, failed},
		{"qos2 released", 2, "released", 0, failed},
		{"qos2 sent, mutation", 2, "sent", MutRepublishLostQoS2, republished},
		{"qos2 rebooted, mutation", 2, "rebooted", MutRepublishLostQoS2, republished},
		{"qos2 released, mutation", 2, "released", MutRepublishLostQoS2, failed},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := fixedConfig(t)
			cfg.Policy.Mutations = c.mut
			h := connected(t, cfg, false)
			if c.flow == "unsent" {
				h.step(ConnClosed{Conn: h.conn})
			}
			h.step(Publish{Cmd: 1, Topic: "t", Payload: []byte("m"), QoS: c.qos})
			if c.flow == "released" {
				h.recv(&packet.Pubrec{PacketID: 1})
			}
			if c.flow != "unsent" {
				h.step(ConnClosed{Conn: h.conn})
			}
			if c.flow == "rebooted" {
				h.reboot()
			}
			acts := h.reconnect(false)
			resent := "send PUBLISH q=" + strconv.Itoa(int(c.qos)) + " id=1 dup=0 topic=t payload=m"
			got := ""
			switch {
			case slices.Contains(acts, resent) && !slices.Contains(acts, "complete 1 failed"):
				got = republished
			case slices.Contains(acts, "complete 1 failed") && !slices.Contains(acts, resent) && slices.Contains(acts, "del out/00001"):
				got = failed
			}
			if got != c.want {
				t.Fatalf("after Session Present 0: %q, want the message %s", acts, c.want)
			}
			if c.want == failed && len(h.store["out/00001"]) != 0 {
				t.Fatalf("the failed message's record is still stored")
			}
		})
	}
}
