package engine

import (
	"fmt"
	"testing"

	"github.com/mqttlab/mqttlab/engine/packet"
	"pgregory.net/rapid"
)

// bpWorld drives a broker with every-change persistence, a clean v5
// publisher "p" and a persistent subscriber "s" (3.1.1 or v5, varying
// Receive Maximum) whose client state is perfect and durable, through random
// publishes, acks, disconnects, broker crashes and restarts. It checks the
// broker's side of the session invariants on every packet it sends to s.
type bpWorld struct {
	t     *rapid.T
	fail  func(format string, args ...any) // t.Fatalf, or a canary's recorder
	cfg   BrokerConfig
	b     *Broker
	now   Time
	disk  map[string][]byte
	dirty []Persist
	conn  ConnID

	// the subscriber
	sConn     ConnID
	sVer      packet.Version
	sRM       int
	sSP       bool
	sHas      bool            // the broker has accepted s's session once
	sOut      int             // QoS 1/2 PUBLISHes the broker sent on sConn, not completed
	sCounted  map[uint16]bool // ids counted in sOut
	inflight  map[uint16]bool // broker → s ids in flight (PUBLISH seen, not completed)
	released  map[uint16]bool // ids the broker sent PUBREL for
	awaitRel  map[uint16]bool // s's own QoS 2 state: received, PUBREL not yet seen
	toAck     []packet.Packet // acks s owes, in order
	delivered map[string]int
	qos2      map[string]bool

	// the publisher
	pConn    ConnID
	pID      uint16
	accepted []string
	n        int
}

func newBPWorld(t *rapid.T, mut Mutation, fail func(string, ...any)) *bpWorld {
	cfg := DefaultBrokerConfig(BrokerPolicy{Persistence: PersistEveryChange, UnknownPubrel: UnknownAckAnswer,
		UnknownPubrec: UnknownAckAnswer, AckOrder: AckAfterCallback, Mutations: mut})
	cfg.InflightV311 = 3
	w := &bpWorld{t: t, fail: fail, cfg: cfg, disk: map[string][]byte{}, inflight: map[uint16]bool{}, released: map[uint16]bool{},
		awaitRel: map[uint16]bool{}, delivered: map[string]int{}, qos2: map[string]bool{}}
	w.restart()
	return w
}

func (w *bpWorld) restart() {
	var recs []Record
	for _, k := range sortedKeys(w.disk) {
		recs = append(recs, Record{Key: k, Value: w.disk[k]})
	}
	b, err := NewBroker(w.cfg, recs)
	if err != nil {
		w.fail("restart: %v", err)
	}
	w.b, w.dirty, w.sConn, w.pConn, w.toAck = b, nil, 0, 0, nil
}

// step runs one event and checks and applies what the broker did.
func (w *bpWorld) step(ev Event) {
	for _, a := range w.b.Step(w.now, ev) {
		switch a := a.(type) {
		case Persist:
			w.dirty = append(w.dirty, a)
			if a.Sync {
				for _, p := range w.dirty {
					if p.Op == Put {
						w.disk[p.Key] = p.Value
					} else {
						delete(w.disk, p.Key)
					}
				}
				w.dirty = nil
			}
		case Send:
			switch a.Conn {
			case w.sConn:
				w.toSub(a.Packet)
			case w.pConn:
				w.toPub(a.Packet)
			}
		case CloseConn:
			if a.Conn == w.sConn || a.Conn == w.pConn {
				w.fail("broker closed a well-behaved client's connection: %v", a.Reason)
			}
		}
	}
}

func (w *bpWorld) send(conn ConnID, v packet.Version, p packet.Packet) {
	data, err := packet.Append(nil, v, p)
	if err != nil {
		w.fail("encode %T: %v", p, err)
	}
	w.step(BytesReceived{Conn: conn, Data: data})
}

// toSub checks a packet the broker sent to s and plays s's client part.
func (w *bpWorld) toSub(p packet.Packet) {
	switch p := p.(type) {
	case *packet.Connack:
		w.sSP = p.SessionPresent
		if !p.SessionPresent && w.sHas {
			w.fail("Session Present 0 for a persistent session with every-change persistence")
		}
	case *packet.Publish:
		if p.QoS == 0 {
			return
		}
		id := p.PacketID
		if w.released[id] {
			w.fail("PUBLISH id %d after its PUBREL [MQTT-4.3.3-6]", id)
		}
		if p.Dup && (!w.sSP || !w.inflight[id]) {
			w.fail("DUP PUBLISH id %d not a resend after a session-present CONNACK [MQTT-4.4.0-1]", id)
		}
		if !p.Dup && w.inflight[id] {
			w.fail("new PUBLISH reuses id %d still in flight [MQTT-2.2.1-4]", id)
		}
		w.inflight[id], w.sCounted[id] = true, true
		w.sOut++
		if w.sOut > w.sRM {
			w.fail("%d PUBLISHes in flight, over the window %d [MQTT-4.9.0-2]", w.sOut, w.sRM)
		}
		msg := string(p.Payload)
		if p.QoS == 1 {
			w.delivered[msg]++
			w.toAck = append(w.toAck, &packet.Puback{PacketID: id})
			return
		}
		if !w.awaitRel[id] {
			w.awaitRel[id] = true
			w.delivered[msg]++
			if w.qos2[msg] {
				w.fail("QoS 2 message %q delivered twice [MQTT-4.3.3-10]", msg)
			}
			w.qos2[msg] = true
		}
		w.toAck = append(w.toAck, &packet.Pubrec{PacketID: id})
	case *packet.Pubrel:
		if !w.inflight[p.PacketID] {
			w.fail("PUBREL for id %d not in flight", p.PacketID)
		}
		w.released[p.PacketID] = true
		delete(w.awaitRel, p.PacketID)
		w.toAck = append(w.toAck, &packet.Pubcomp{PacketID: p.PacketID})
	}
}

// toPub plays the publisher: a PUBACK or PUBREC accepts the message (PUBREL
// at once).
func (w *bpWorld) toPub(p packet.Packet) {
	switch p := p.(type) {
	case *packet.Puback:
		w.accepted = append(w.accepted, fmt.Sprintf("m%d", p.PacketID))
	case *packet.Pubrec:
		w.accepted = append(w.accepted, fmt.Sprintf("m%d", p.PacketID))
		w.send(w.pConn, packet.V5, &packet.Pubrel{PacketID: p.PacketID})
	}
}

// ackOne sends the oldest ack s owes.
func (w *bpWorld) ackOne() {
	if w.sConn == 0 || len(w.toAck) == 0 {
		return
	}
	p := w.toAck[0]
	w.toAck = w.toAck[1:]
	var id uint16
	switch a := p.(type) {
	case *packet.Puback:
		id = a.PacketID
	case *packet.Pubcomp:
		id = a.PacketID
		delete(w.released, id)
	}
	if id != 0 {
		delete(w.inflight, id)
		if w.sCounted[id] {
			delete(w.sCounted, id)
			w.sOut--
		}
	}
	w.send(w.sConn, w.sVer, p)
}

func (w *bpWorld) open() ConnID {
	w.conn++
	w.step(ConnOpened{Conn: w.conn})
	return w.conn
}

func (w *bpWorld) connectSub(v5 bool, rm int) {
	w.sConn, w.sOut, w.sCounted, w.toAck, w.sSP = w.open(), 0, map[uint16]bool{}, nil, false
	c := &packet.Connect{Version: packet.V311, ClientID: "s"}
	w.sVer, w.sRM = packet.V311, int(w.cfg.InflightV311)
	if v5 {
		c.Version, w.sVer, w.sRM = packet.V5, packet.V5, rm
		c.Props.Present = c.Props.Present.With(packet.PropSessionExpiry).With(packet.PropReceiveMaximum)
		c.Props.SessionExpiry, c.Props.ReceiveMaximum = 100000, uint16(rm)
	}
	w.send(w.sConn, w.sVer, c)
}

func (w *bpWorld) connectPub() {
	w.pConn = w.open()
	w.send(w.pConn, packet.V5, &packet.Connect{Version: packet.V5, ClientID: "p", CleanStart: true})
}

// TestBrokerSessionProperty: under random interleavings of publishes, acks,
// disconnects and broker crashes, the broker never reuses an in-flight id,
// resends only after a session-present CONNACK with DUP=1, never PUBLISHes
// after PUBREL, stays within the subscriber's window, delivers QoS 2 once,
// and, with every-change persistence, loses no accepted message.
func TestBrokerSessionProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) { bpProperty(t, 0, t.Fatalf) })
}

// TestBrokerSessionPropertyCanary proves the property bites: with each
// mutation of the fixes, some random run violates it.
func TestBrokerSessionPropertyCanary(t *testing.T) {
	for _, mut := range []Mutation{MutResendWithoutDup, MutPublishAfterPubrel, MutReuseInflightID} {
		t.Run(fmt.Sprint(mut), func(t *testing.T) {
			var caught string
			rapid.Check(t, func(rt *rapid.T) {
				if caught != "" {
					return
				}
				bpProperty(rt, mut, func(format string, args ...any) {
					caught = fmt.Sprintf(format, args...)
					panic(bpCaught{})
				})
			})
			if caught == "" {
				t.Fatalf("mutation %d never violated the property", mut)
			}
			t.Logf("caught: %s", caught)
		})
	}
}

// bpCaught unwinds a canary run at its first violation.
type bpCaught struct{}

// bpProperty is one run of TestBrokerSessionProperty.
func bpProperty(t *rapid.T, mut Mutation, fail func(string, ...any)) {
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(bpCaught); !ok {
				panic(r)
			}
		}
	}()
	{
		w := newBPWorld(t, mut, fail)
		w.connectSub(rapid.Bool().Draw(t, "v5"), 1+rapid.IntRange(0, 3).Draw(t, "rm"))
		w.send(w.sConn, w.sVer, &packet.Subscribe{PacketID: 1, Subs: []packet.Subscription{{Filter: "t/#", QoS: 2}}})
		w.sHas = true // the first CONNACK is SP=0 by right; later ones are checked
		w.connectPub()
		for range rapid.IntRange(1, 60).Draw(t, "ops") {
			switch rapid.IntRange(0, 9).Draw(t, "op") {
			case 0, 1, 2:
				if w.pConn == 0 {
					w.connectPub()
				}
				w.pID++
				if w.pID == 0 {
					w.pID = 1
				}
				qos := packet.QoS(rapid.IntRange(1, 2).Draw(t, "qos"))
				w.send(w.pConn, packet.V5, &packet.Publish{QoS: qos, PacketID: w.pID, Topic: []byte("t/x"),
					Payload: fmt.Appendf(nil, "m%d", w.pID)})
			case 3, 4, 5:
				w.ackOne()
			case 6:
				if w.sConn != 0 {
					w.step(ConnClosed{Conn: w.sConn})
					w.sConn = 0
				}
			case 7:
				if w.sConn == 0 {
					w.connectSub(rapid.Bool().Draw(t, "v5"), 1+rapid.IntRange(0, 3).Draw(t, "rm"))
				}
			case 8:
				w.restart()
				w.sSP = false
			default:
				w.now += Time(Second)
			}
		}
		// Liveness: reconnect the subscriber and ack until the broker is idle.
		if w.sConn == 0 {
			w.connectSub(true, 4)
		}
		for range 10000 {
			if len(w.toAck) == 0 {
				break
			}
			w.ackOne()
		}
		for _, m := range w.accepted {
			if w.delivered[m] == 0 {
				fail("accepted message %q never delivered (accepted %v, delivered %v)", m, w.accepted, w.delivered)
			}
		}
		if st := w.b.Stats(); st.Inflight != 0 || st.Queued != 0 {
			fail("broker not idle after draining: %+v", st)
		}
	}
}
