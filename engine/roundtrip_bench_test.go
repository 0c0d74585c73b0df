package engine

import (
	"fmt"
	"testing"

	"github.com/mqttlab/mqttlab/engine/packet"
)

// rtWorld is a minimal in-memory world for the round-trip benchmark: one
// publisher client, one subscriber client and a broker, joined by FIFO event
// queues, driven by Step calls alone. The subscriber's application acks each
// delivery at once.
type rtWorld struct {
	tb        testing.TB
	broker    *Broker
	clients   [2]*Client // 0: publisher on conn 1, 1: subscriber on conn 2
	queue     []rtEvent
	head      int
	acked     int // publisher Completes with Acknowledged
	delivered int // subscriber Delivers
	// seen, if set, sees every Step's actions before they are routed.
	seen func(from int, acts []Action)
}

// rtEvent is an event addressed to the broker (to == -1) or a client. The
// frequent kinds are kept unboxed so the world itself allocates nothing per
// message: bytes (ev == nil, data set) and acks (ev == nil, delivery set).
type rtEvent struct {
	to       int
	ev       Event
	conn     ConnID
	data     []byte
	delivery DeliveryID
}

// event returns the Event to step.
func (e *rtEvent) event() Event {
	switch {
	case e.ev != nil:
		return e.ev
	case e.data != nil:
		return BytesReceived{Conn: e.conn, Data: e.data}
	}
	return Ack{Delivery: e.delivery}
}

func newRTWorld(tb testing.TB, cp ClientPolicy, bp BrokerPolicy, v packet.Version) *rtWorld {
	return newRTWorldReuse(tb, cp, bp, v, false)
}

// newRTWorldReuse is newRTWorld with the engines' ReuseActions set as asked.
func newRTWorldReuse(tb testing.TB, cp ClientPolicy, bp BrokerPolicy, v packet.Version, reuse bool) *rtWorld {
	bc := DefaultBrokerConfig(bp)
	bc.ReuseActions = reuse
	b, err := NewBroker(bc, nil)
	if err != nil {
		tb.Fatal(err)
	}
	w := &rtWorld{tb: tb, broker: b}
	for i, id := range []string{"pub", "sub"} {
		cfg := DefaultClientConfig(id, cp)
		cfg.Version = v
		cfg.ReuseActions = reuse
		if v == packet.V311 {
			cfg.SessionExpiry = 0
		}
		c, err := NewClient(cfg, nil)
		if err != nil {
			tb.Fatal(err)
		}
		w.clients[i] = c
		w.toClient(i, Connect{Cmd: 1})
	}
	w.run()
	w.toClient(1, Subscribe{Cmd: 2, Subs: []packet.Subscription{{Filter: "bench/+", QoS: 2}}})
	w.run()
	return w
}

func (w *rtWorld) toClient(i int, ev Event) { w.queue = append(w.queue, rtEvent{to: i, ev: ev}) }

// run delivers queued events until the world is quiet.
func (w *rtWorld) run() {
	for w.head < len(w.queue) {
		e := w.queue[w.head]
		w.queue[w.head] = rtEvent{}
		w.head++
		from, acts := e.to, []Action(nil)
		if e.to < 0 {
			acts = w.broker.Step(0, e.event())
		} else {
			acts = w.clients[e.to].Step(0, e.event())
		}
		if w.seen != nil {
			w.seen(from, acts)
		}
		w.route(from, acts)
	}
	w.queue, w.head = w.queue[:0], 0
}

// route turns the actions of node from into events for the others.
func (w *rtWorld) route(from int, acts []Action) {
	for _, a := range acts {
		switch a := a.(type) {
		case Send:
			to := -1
			if from < 0 {
				to = int(a.Conn) - 1
			}
			w.queue = append(w.queue, rtEvent{to: to, conn: a.Conn, data: a.Data})
		case Dial:
			conn := ConnID(from + 1)
			w.queue = append(w.queue, rtEvent{to: -1, ev: ConnOpened{Conn: conn}})
			w.toClient(from, ConnOpened{Conn: conn})
		case Deliver:
			w.delivered++
			w.queue = append(w.queue, rtEvent{to: from, delivery: a.Delivery})
		case Complete:
			if a.Result == Failed {
				w.tb.Fatalf("node %d: command %d failed: %v", from, a.Cmd, a.Err)
			}
			if from == 0 && a.Result == Acknowledged && a.Cmd >= 10 { // publishes, not the CONNACK
				w.acked++
			}
		case CloseConn:
			w.tb.Fatalf("node %d closed connection %d: %v", from, a.Conn, a.Reason)
		}
	}
}

// BenchmarkRoundTrip measures one message publisher → broker → subscriber
// with every ack (QoS 1: PUBLISH, PUBACK twice; QoS 2: PUBLISH, PUBREC,
// PUBREL, PUBCOMP twice), memory-only policies unless "durable" (the fixed
// preset: every change persisted on both sides). ns/op and allocs/op are
// per message.
func BenchmarkRoundTrip(b *testing.B) {
	memClient := ClientPolicy{Retransmit: RetransmitMemory, UnknownPubrel: UnknownAckAnswer, UnknownPubrec: UnknownAckAnswer,
		AckOrder: AckAfterCallback, IncomingQoS2: LegacyQoS2Volatile}
	memBroker := BrokerPolicy{Persistence: LegacyPersistNone, UnknownPubrel: UnknownAckAnswer, UnknownPubrec: UnknownAckAnswer,
		AckOrder: AckAfterCallback}
	fixed, err := PresetByName("fixed")
	if err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		qos  packet.QoS
		cp   ClientPolicy
		bp   BrokerPolicy
		v    packet.Version
	}{
		{"QoS1", 1, memClient, memBroker, packet.V5},
		{"QoS2", 2, memClient, memBroker, packet.V5},
		{"QoS1-v311", 1, memClient, memBroker, packet.V311},
		{"QoS1-durable", 1, fixed.Client, fixed.Broker, packet.V5},
		{"QoS2-durable", 2, fixed.Client, fixed.Broker, packet.V5},
	} {
		b.Run(tc.name, func(b *testing.B) {
			w := newRTWorld(b, tc.cp, tc.bp, tc.v)
			payload := []byte("0123456789abcdef0123456789abcdef")
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				w.toClient(0, Publish{Cmd: CmdID(i + 10), Topic: "bench/t", Payload: payload, QoS: tc.qos})
				w.run()
			}
			b.StopTimer()
			if w.acked != b.N || w.delivered != b.N {
				b.Fatalf("%d messages: %d acknowledged, %d delivered", b.N, w.acked, w.delivered)
			}
		})
	}
}

// TestRoundTripWorld checks the benchmark's world really completes every
// flow, so the benchmark measures what it claims.
func TestRoundTripWorld(t *testing.T) {
	for _, qos := range []packet.QoS{1, 2} {
		t.Run(fmt.Sprint("QoS", qos), func(t *testing.T) {
			w := newRTWorld(t, ClientPolicy{Retransmit: RetransmitMemory, UnknownPubrel: UnknownAckAnswer,
				UnknownPubrec: UnknownAckAnswer, AckOrder: AckAfterCallback, IncomingQoS2: LegacyQoS2Volatile},
				BrokerPolicy{Persistence: LegacyPersistNone, UnknownPubrel: UnknownAckAnswer, UnknownPubrec: UnknownAckAnswer,
					AckOrder: AckAfterCallback}, packet.V5)
			for i := range 100 {
				w.toClient(0, Publish{Cmd: CmdID(i + 10), Topic: "bench/t", Payload: []byte("x"), QoS: qos})
				w.run()
			}
			if w.acked != 100 || w.delivered != 100 {
				t.Fatalf("100 messages: %d acknowledged, %d delivered", w.acked, w.delivered)
			}
			if st := w.broker.Stats(); st.Inflight != 0 || st.Queued != 0 || st.PublishesIn != 100 || st.PublishesOut != 100 {
				t.Fatalf("broker not idle after the round trips: %+v", st)
			}
		})
	}
}

// BenchmarkBrokerRoundTrip is the broker's share of BenchmarkRoundTrip: the
// clients' bytes are pre-encoded, so only Broker.Step runs (PUBLISH from the
// publisher, the subscriber's PUBACK or PUBREC+PUBCOMP, the publisher's
// PUBREL for QoS 2).
func BenchmarkBrokerRoundTrip(b *testing.B) {
	for _, qos := range []packet.QoS{1, 2} {
		b.Run(fmt.Sprint("QoS", qos), func(b *testing.B) {
			br, err := NewBroker(DefaultBrokerConfig(BrokerPolicy{Persistence: LegacyPersistNone, UnknownPubrel: UnknownAckAnswer,
				UnknownPubrec: UnknownAckAnswer, AckOrder: AckAfterCallback}), nil)
			if err != nil {
				b.Fatal(err)
			}
			enc := func(p packet.Packet) []byte { return mustAppend(b, packet.V5, p) }
			for conn, id := range map[ConnID]string{1: "pub", 2: "sub"} {
				br.Step(0, ConnOpened{Conn: conn})
				br.Step(0, BytesReceived{Conn: conn, Data: enc(&packet.Connect{Version: packet.V5, ClientID: id, CleanStart: true})})
			}
			br.Step(0, BytesReceived{Conn: 2, Data: enc(&packet.Subscribe{PacketID: 1, Subs: []packet.Subscription{{Filter: "bench/+", QoS: 2}}})})
			pub := enc(&packet.Publish{QoS: qos, PacketID: 7, Topic: []byte("bench/t"), Payload: []byte("0123456789abcdef0123456789abcdef")})
			pubrel := enc(&packet.Pubrel{PacketID: 7})
			ack := make([]byte, 0, 16)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				acts := br.Step(0, BytesReceived{Conn: 1, Data: pub})
				if len(acts) != 2 {
					b.Fatalf("PUBLISH: %d actions", len(acts))
				}
				id := acts[0].(Send).Packet.(*packet.Publish).PacketID
				if qos == 1 {
					ack, _ = packet.Append(ack[:0], packet.V5, &packet.Puback{PacketID: id})
					br.Step(0, BytesReceived{Conn: 2, Data: ack})
					continue
				}
				br.Step(0, BytesReceived{Conn: 1, Data: pubrel})
				ack, _ = packet.Append(ack[:0], packet.V5, &packet.Pubrec{PacketID: id})
				br.Step(0, BytesReceived{Conn: 2, Data: ack})
				ack, _ = packet.Append(ack[:0], packet.V5, &packet.Pubcomp{PacketID: id})
				br.Step(0, BytesReceived{Conn: 2, Data: ack})
			}
			b.StopTimer()
			if st := br.Stats(); st.Inflight != 0 || st.PublishesOut != uint64(b.N) {
				b.Fatalf("broker not idle: %+v", st)
			}
		})
	}
}
