package sim

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/mqttlab/mqttlab/engine"
	"github.com/mqttlab/mqttlab/engine/packet"
)

// observer follows the packets and application events of a run to answer
// the liveness questions the engine API cannot: which packet ids are still
// in flight on each side of each client's session, and which accepted
// messages some subscriber still waits for: one whose session lives, as
// the model's NoLoss judges (sessionEnded).
type observer struct {
	// inflight[c][k] is the set of packet ids in flight on one side of
	// client c's session: k = outClient (client's outgoing PUBLISH/PUBREL
	// awaiting their ack), inClient (incoming QoS2 awaiting PUBREL), and the
	// broker's two sets towards c.
	inflight [][4]idSet
	pending  int // total ids in flight
	subs     [][]sub
	// owed[c][m] says what subscriber c has of message m (the run's string
	// id of its message id): owedSeen, owedExpected. A slice per node
	// indexed by message id: the ids are small and dense.
	owed     [][]uint8
	expected int // (c, m) pairs marked owedExpected
	// unacked[p] are publisher p's accepted QoS>=1 messages not yet
	// acknowledged: a clean start of p forgets them (cleanStarted), a
	// Session Present 0 those the broker had not acknowledged (sessionLost).
	unacked [][]pubCmd
	// inbound[p] maps the packet id of the broker's last received QoS>0
	// PUBLISH from publisher p to its message, until the broker's ack.
	inbound []map[uint16]uint32
	// cleanConn[c]: client c's last CONNECT asked Clean Start.
	cleanConn []bool
	// topics[m] is the topic of message m (a string id), for unsubscribe.
	topics []uint32
	// lastReq[c] is, per filter, what the last SUBSCRIBE or UNSUBSCRIBE
	// of client c the broker received left of it (swarm only): a SUBACK
	// the client reads later may answer an earlier request.
	lastReq [][]filterReq
	// sess[c] is client c's session as the broker's packets and
	// connection ends show it (expiry.go): when the broker may have
	// discarded it unseen.
	sess []brokerSess
	// expired[c]: the broker's last CONNACK to client c discarded its
	// session as the spec allows (SessionWatch.Discards), so a Session
	// Present 0 the client reads excuses what it had not had acknowledged
	// (sessionLost).
	expired []bool
}

// owed flags.
const (
	owedSeen     uint8 = 1 << iota // delivered at least once
	owedExpected                   // accepted, matching, not yet delivered
	owedDropped                    // the broker dropped its copy at a full queue: not waited for
)

// owedOf returns the flags of message msg at subscriber c, growing c's
// slice to hold msg.
func (o *observer) owedOf(c int, msg uint32) *uint8 {
	if int(msg) >= len(o.owed[c]) {
		o.owed[c] = append(o.owed[c], make([]uint8, int(msg)+1-len(o.owed[c]))...)
	}
	return &o.owed[c][msg]
}

const (
	outClient = iota
	inClient
	outBroker
	inBroker
)

type sub struct {
	filter string
	qos    uint8
}

// pubCmd is an accepted message of a publisher and the command that
// published it: message ids need not be unique (every empty publish has
// the id ""), command ids are.
type pubCmd struct {
	cmd    engine.CmdID
	msg    uint32
	tid    uint32 // its topic, a string id
	qos    uint8
	retain bool
	owned  bool // the broker acknowledged it (PUBACK, PUBREC < 0x80)
}

// restoredPublish returns the publish of publisher p's command cmd that the
// observer still holds unacknowledged: a message a crash took from the
// application's memory but not from the engine's records.
func (o *observer) restoredPublish(p int32, cmd engine.CmdID) (cmdInfo, bool) {
	i := slices.IndexFunc(o.unacked[p], func(u pubCmd) bool { return u.cmd == cmd })
	if i < 0 {
		return cmdInfo{}, false
	}
	u := &o.unacked[p][i]
	return cmdInfo{kind: cmdPublish, msg: u.msg, tid: u.tid, qos: u.qos, retain: u.retain}, true
}

// filterReq is what the broker's last received request on a filter left:
// a subscription at QoS >= 1 (held) or none at QoS >= 1.
type filterReq struct {
	filter string
	held   bool
}

// addNode makes room for one more node.
func (o *observer) addNode() {
	o.inflight = append(o.inflight, [4]idSet{})
	o.subs = append(o.subs, nil)
	o.owed = append(o.owed, nil)
	o.unacked = append(o.unacked, nil)
	o.inbound = append(o.inbound, nil)
	o.cleanConn = append(o.cleanConn, false)
	o.lastReq = append(o.lastReq, nil)
	o.sess = append(o.sess, brokerSess{})
	o.expired = append(o.expired, false)
}

// acknowledged: publisher p's message of command cmd is acknowledged. It
// is found by its command, not its message id: a message a clean start
// already forgot (cleanStarted) may be acknowledged after it, when the
// engine kept it (accepted, never sent: not session state, v5 §4.1), and
// its id may be another unacknowledged message's too (an empty publish's
// "", which must stay for the next clean start to forget).
func (o *observer) acknowledged(p int32, cmd engine.CmdID) {
	switch i := slices.IndexFunc(o.unacked[p], func(u pubCmd) bool { return u.cmd == cmd }); {
	case i == 0: // the oldest, as acks mostly come: a burst's 65,535 would copy the rest each time
		o.unacked[p] = o.unacked[p][1:]
	case i > 0:
		o.unacked[p] = slices.Delete(o.unacked[p], i, i+1)
	}
}

// cleanStarted: publisher p connected with Clean Start 1, which discards
// its unacknowledged messages [MQTT-3.1.2-4]: nothing is owed of them.
func (o *observer) cleanStarted(p int32) {
	for _, u := range o.unacked[p] {
		o.forget(u.msg)
	}
	o.unacked[p] = o.unacked[p][:0]
}

// sessionLost: publisher p read Session Present 0 to Clean Start 0. It
// discards its session state [MQTT-3.2.2-5] and may so drop the messages
// whose PUBLISH left in it (the engine drops its sent QoS 2 ones). When
// the broker's CONNACK discarded a session that had expired (expired),
// nothing is owed of those the broker had not acknowledged; those it
// acknowledged are its own [MQTT-4.3.2-4] [MQTT-4.3.3-8] and stay owed. A
// session the broker lost while it should still live owes them all, as
// the model's NoLoss says.
func (o *observer) sessionLost(p int32) {
	for _, u := range o.unacked[p] {
		if !u.owned && o.expired[p] {
			o.forget(u.msg)
		}
	}
	o.unacked[p] = o.unacked[p][:0]
	clear(o.inbound[p])
}

// sessionEnded: client c's session ended as the spec allows (a Clean
// Start the broker received [MQTT-3.1.2-4], or the broker's discard of a
// session whose Session Expiry Interval ran out [MQTT-4.1.0-2], seen or
// unseen): its subscriptions went with it, and nothing is owed to it any
// more of what they had matched.
func (o *observer) sessionEnded(c int32) {
	o.subs[c] = o.subs[c][:0]
	for msg, f := range o.owed[c] {
		if f&owedExpected != 0 {
			o.owed[c][msg] &^= owedExpected
			o.expected--
		}
	}
}

// forget: message msg is owed to no subscriber any more.
func (o *observer) forget(msg uint32) {
	for c := range o.owed {
		if int(msg) < len(o.owed[c]) && o.owed[c][msg]&owedExpected != 0 {
			o.owed[c][msg] &^= owedExpected
			o.expected--
		}
	}
}

// brokerAcked: the broker acknowledged publisher p's PUBLISH of packet id
// id (PUBACK, PUBREC < 0x80): it owns that message now.
func (o *observer) brokerAcked(p int32, id uint16) {
	msg, ok := o.inbound[p][id]
	if !ok {
		return
	}
	delete(o.inbound[p], id)
	if i := slices.IndexFunc(o.unacked[p], func(u pubCmd) bool { return u.msg == msg && !u.owned }); i >= 0 {
		o.unacked[p][i].owned = true
	}
}

func (o *observer) add(c int32, k int, id uint16) {
	if o.inflight[c][k].add(id) {
		o.pending++
	}
}

func (o *observer) del(c int32, k int, id uint16) {
	if o.inflight[c][k].del(id) {
		o.pending--
	}
}

// idSet is a set of packet ids, unordered: a few ids are in flight at a
// time, so a scan of a slice beats a map and allocates far less.
type idSet []uint16

// add inserts id and reports whether it was new.
func (s *idSet) add(id uint16) bool {
	if slices.Contains(*s, id) {
		return false
	}
	*s = append(*s, id)
	return true
}

// del removes id and reports whether it was there.
func (s *idSet) del(id uint16) bool {
	i := slices.Index(*s, id)
	if i < 0 {
		return false
	}
	last := len(*s) - 1
	(*s)[i] = (*s)[last]
	*s = (*s)[:last]
	return true
}

// sent follows a packet the side sent on c.
func (o *observer) sent(w *World, c *conn, side uint8, p *cpacket) {
	out, in := outClient, inClient
	if side == sideBroker {
		out, in = outBroker, inBroker
	}
	switch packet.Type(p.typ) {
	case packet.CONNECT:
		o.cleanConn[c.client] = p.flags&pktClean != 0
	case packet.CONNACK:
		if side == sideBroker {
			s := &o.sess[c.client]
			o.expired[c.client] = s.Discards(p.sessions(), p.reason)
			if o.expired[c.client] && (!o.cleanConn[c.client] || w.nodes[c.client].app.clean) {
				o.sessionEnded(c.client) // not at a clean start the engine forced (see received)
			}
			s.connack(p)
		}
		if side == sideBroker && !p.sessions() && p.reason == 0 {
			// The broker discarded the session, whether or not the client
			// reads this CONNACK: none of its ids of the old session is
			// owed any more (the client's side clears when it reads it).
			o.brokerDiscarded(c.client)
		}
	case packet.PUBLISH:
		if p.qos > 0 {
			o.add(c.client, out, p.id)
		}
		if p.dup() {
			w.stats.Retransmits++
		}
	case packet.PUBACK:
		if side == sideBroker {
			o.brokerAcked(c.client, p.id)
		}
	case packet.PUBCOMP:
		o.del(c.client, in, p.id)
	case packet.PUBREC:
		if p.reason >= 0x80 {
			o.del(c.client, in, p.id)
		} else if side == sideBroker {
			o.brokerAcked(c.client, p.id)
		}
	}
}

// received follows a packet the side received on c.
func (o *observer) received(w *World, c *conn, side uint8, p *cpacket) {
	out, in := outClient, inClient
	if side == sideBroker {
		out, in = outBroker, inBroker
	}
	switch packet.Type(p.typ) {
	case packet.CONNECT, packet.DISCONNECT:
		if side == sideBroker {
			o.sess[c.client].received(p, int64(w.sched.now), w.nodes[c.client].version)
			if packet.Type(p.typ) == packet.CONNECT && p.flags&pktClean != 0 && w.nodes[c.client].app.clean {
				// [MQTT-3.1.2-4] a clean start the application asked for
				// (one the engine forced after [MQTT-3.2.2-4] is not
				// followed: the observer still waits for what it owed).
				o.sessionEnded(c.client)
			}
		}
	case packet.PUBLISH:
		if p.qos == 2 {
			o.add(c.client, in, p.id)
		}
		if side == sideBroker && p.topic != 0 && w.aclDeniesWrite(c.client, w.strs.strs[p.topic]) {
			// The broker's ACL refuses it (v5 0x87) or drops it (3.1.1,
			// acknowledged [MQTT-3.3.5-2]): owed to no one.
			o.forget(p.msg)
		}
		if side == sideBroker && p.qos > 0 {
			if o.inbound[c.client] == nil {
				o.inbound[c.client] = map[uint16]uint32{}
			}
			o.inbound[c.client][p.id] = p.msg
		}
	case packet.PUBACK, packet.PUBCOMP:
		o.del(c.client, out, p.id)
	case packet.PUBREC:
		if p.reason >= 0x80 {
			o.del(c.client, out, p.id)
		}
	case packet.UNSUBSCRIBE:
		if side == sideBroker && p.filter != 0 && w.scen.Name == SwarmScenario {
			// The broker took the filter off even if the UNSUBACK never
			// reaches the client.
			o.requested(c.client, w.strs.strs[p.filter], false)
			o.unsubscribed(w, c.client, w.strs.strs[p.filter])
		}
	case packet.SUBSCRIBE:
		if side == sideBroker && p.filter != 0 && w.scen.Name == SwarmScenario {
			o.requested(c.client, w.strs.strs[p.filter], p.qos > 0)
		}
		if side == sideBroker && p.filter != 0 && p.qos == 0 && w.scen.Name == SwarmScenario {
			// A QoS 0 SUBSCRIBE replaces the filter's QoS>=1 subscription
			// [MQTT-3.8.4-3] even if the SUBACK never reaches the client:
			// a QoS 1 or 2 message the broker routes from here on goes at
			// QoS 0 [MQTT-3.8.4-8], which a broker need not queue for a
			// client away, so nothing is owed on the filter any more.
			o.unsubscribed(w, c.client, w.strs.strs[p.filter])
		}
	case packet.CONNACK:
		w.nodes[c.client].app.rm = c.rm
		if side == sideClient && !p.sessions() && p.reason == 0 {
			// The broker kept nothing: whatever the client does with this
			// CONNACK (even crash inside the step), no old id is owed.
			o.sessionDiscarded(c.client)
			if !o.cleanConn[c.client] {
				o.sessionLost(c.client)
			}
		}
	}
}

// sessionDiscarded clears both sides of client c's session (CONNACK with
// Session Present 0: neither side keeps state [MQTT-3.2.2-5]).
func (o *observer) sessionDiscarded(c int32) {
	for k := range o.inflight[c] {
		o.pending -= len(o.inflight[c][k])
		o.inflight[c][k] = o.inflight[c][k][:0]
	}
}

// brokerDiscarded clears the broker's side of client c's session, and the
// QoS 2 ids the client received in it: no PUBREL will ever come for them,
// whatever the client keeps (a client that misses the CONNACK that says so
// keeps them for good, and is right to [MQTT-3.2.2-5]).
func (o *observer) brokerDiscarded(c int32) {
	for _, k := range [3]int{outBroker, inBroker, inClient} {
		o.pending -= len(o.inflight[c][k])
		o.inflight[c][k] = o.inflight[c][k][:0]
	}
}

// subscribe: client c read the SUBACK granting filter at qos. The broker
// took that SUBSCRIBE before it sent the SUBACK; when it has taken a later
// UNSUBSCRIBE of the filter since (or a QoS 0 SUBSCRIBE), that request
// removed the subscription [MQTT-3.10.4-1] (or its QoS>=1 [MQTT-3.8.4-3]),
// whatever SUBACK the client reads after it: nothing is owed on it.
func (o *observer) subscribe(c int32, filter string, qos uint8) {
	o.unsubscribe(c, filter)
	if qos > 0 && !o.held(c, filter) {
		return
	}
	o.subs[c] = append(o.subs[c], sub{filter: filter, qos: qos})
}

// requested: the broker received a SUBSCRIBE (held: at QoS >= 1) or an
// UNSUBSCRIBE (not held) of filter from client c.
func (o *observer) requested(c int32, filter string, held bool) {
	for i := range o.lastReq[c] {
		if o.lastReq[c][i].filter == filter {
			o.lastReq[c][i].held = held
			return
		}
	}
	o.lastReq[c] = append(o.lastReq[c], filterReq{filter: filter, held: held})
}

// held reports whether the broker's last received request of client c on
// filter left a QoS >= 1 subscription; true when it received none the
// observer follows (outside the swarm scenario).
func (o *observer) held(c int32, filter string) bool {
	for _, r := range o.lastReq[c] {
		if r.filter == filter {
			return r.held
		}
	}
	return true
}

func (o *observer) unsubscribe(c int32, filter string) {
	o.subs[c] = slices.DeleteFunc(o.subs[c], func(s sub) bool { return s.filter == filter })
}

// unsubscribed: client c's UNSUBACK removed filter. The broker may drop
// what it had not started to send on it [MQTT-3.10.4-3] (what it started
// stays in flight, which quiet waits for): a message no remaining
// subscription of c matches is no longer owed to c.
func (o *observer) unsubscribed(w *World, c int32, filter string) {
	o.unsubscribe(c, filter)
	for msg, f := range o.owed[c] {
		if f&owedExpected == 0 || msg >= len(o.topics) {
			continue
		}
		topic := w.strs.strs[o.topics[msg]]
		if !slices.ContainsFunc(o.subs[c], func(s sub) bool { return s.qos > 0 && Match(s.filter, topic) }) {
			o.owed[c][msg] &^= owedExpected
			o.expected--
		}
	}
}

// accepted records the deliveries an accepted message owes: one to every
// subscriber whose subscription at QoS >= 1 matches it, for QoS >= 1. None
// is owed to its own publisher (No Local may hold), none for a message that
// may expire first, none to a subscriber whose Maximum Packet Size it may
// exceed [MQTT-3.1.2-25].
func (o *observer) accepted(w *World, from int32, cmd engine.CmdID, ci *cmdInfo) {
	if ci.qos == 0 {
		return
	}
	msg, topic := ci.msg, w.strs.strs[ci.tid]
	o.unacked[from] = append(o.unacked[from], pubCmd{cmd: cmd, msg: msg, tid: ci.tid, qos: ci.qos, retain: ci.retain})
	if ci.expiry != 0 {
		return // (unacked, for restoredPublish: nothing is owed of it here)
	}
	if w.scen.Name == SwarmScenario { // only swarm unsubscribes
		for int(msg) >= len(o.topics) {
			o.topics = append(o.topics, 0)
		}
		o.topics[msg] = ci.tid
	}
	for c, subs := range o.subs {
		if int32(c) == from || tooBig(w.nodes[c], ci.size, topic) {
			continue
		}
		for _, s := range subs {
			if s.qos > 0 && Match(s.filter, topic) {
				if f := o.owedOf(c, msg); *f&(owedSeen|owedExpected|owedDropped) == 0 {
					*f |= owedExpected
					o.expected++
				}
				break
			}
		}
	}
}

// dropped records the broker's queue-full drop of subscriber c's copy of
// msg: the world no longer waits for it (the model judges whether the
// broker's declared bound allowed the drop). The drop may come before
// the publisher hears its message accepted (drop-newest drops the
// arriving copy), so it is remembered.
func (o *observer) dropped(c int32, msg uint32) {
	f := o.owedOf(int(c), msg)
	if *f&owedExpected != 0 {
		o.expected--
	}
	*f = *f&^owedExpected | owedDropped
}

// tooBig reports whether a PUBLISH of size payload bytes on topic may
// exceed node n's Maximum Packet Size (a generous bound on the header).
func tooBig(n *node, size uint32, topic string) bool {
	return n.cfg != nil && n.cfg.MaxSize != 0 && int(size)+len(topic)+64 > int(n.cfg.MaxSize)
}

// delivered records a delivery to subscriber c and counts duplicates.
func (o *observer) delivered(w *World, c int32, msg uint32) {
	w.stats.Delivered++
	f := o.owedOf(int(c), msg)
	if *f&owedSeen != 0 {
		w.stats.Duplicates++
	}
	if *f&owedExpected != 0 {
		o.expected--
	}
	*f = owedSeen
}

// pendingReport lists what keeps the world from being quiet, sorted.
func (o *observer) pendingReport(w *World) string {
	var parts []string
	names := [4]string{"client-out", "client-in", "broker-out", "broker-in"}
	for c := range o.inflight {
		for k, m := range o.inflight[c] {
			if len(m) == 0 {
				continue
			}
			ids := make([]int, 0, len(m))
			for _, id := range m {
				ids = append(ids, int(id))
			}
			slices.Sort(ids)
			var b strings.Builder
			b.WriteString(w.nodes[c].name + " " + names[k] + " ids")
			for _, id := range ids {
				b.WriteString(" " + strconv.Itoa(id))
			}
			parts = append(parts, b.String())
		}
	}
	if o.expected > 0 {
		var und []string
		for c, flags := range o.owed {
			for msg, f := range flags {
				if f&owedExpected != 0 {
					und = append(und, w.nodes[c].name+"<-"+w.strs.strs[msg])
				}
			}
		}
		slices.Sort(und)
		parts = append(parts, "undelivered "+strings.Join(und, " "))
	}
	return strings.Join(parts, "; ")
}

// Match reports whether an MQTT topic filter matches a topic name, with the
// + and # wildcards; a filter starting with a wildcard does not match a
// topic starting with $ [MQTT-4.7.2-1].
func Match(filter, topic string) bool {
	if strings.HasPrefix(topic, "$") && (strings.HasPrefix(filter, "+") || strings.HasPrefix(filter, "#")) {
		return false
	}
	for {
		fl, frest, fmore := strings.Cut(filter, "/")
		if fl == "#" {
			return true
		}
		tl, trest, tmore := strings.Cut(topic, "/")
		if fl != "+" && fl != tl {
			return false
		}
		if !fmore || !tmore {
			if !fmore && !tmore {
				return true
			}
			// "a/#" matches "a" too.
			return !tmore && frest == "#"
		}
		filter, topic = frest, trest
	}
}

// pendingLists are the labels after which a Stuck reason (pendingReport)
// lists items: ids in flight, undelivered subscriber<-message pairs.
var pendingLists = []string{" ids ", "undelivered "}

// ShortReason shortens the lists a reason holds (a Stuck reason lists every
// undelivered message, hundreds in a long run) to their first keep items
// and a count of the rest, for one-line reports; the history and the JSON
// summaries keep the full reason.
func ShortReason(reason string, keep int) string {
	parts := strings.Split(reason, "; ")
	for i, p := range parts {
		parts[i] = shortList(p, keep)
	}
	return strings.Join(parts, "; ")
}

// shortList shortens the list of one part of a Stuck reason.
func shortList(part string, keep int) string {
	for _, label := range pendingLists {
		at := strings.LastIndex(part, label)
		if at < 0 {
			continue
		}
		head, items := part[:at+len(label)], strings.Fields(part[at+len(label):])
		if len(items) <= keep {
			return part
		}
		return fmt.Sprintf("%s%s ... (+%d more, %d in all)", head, strings.Join(items[:keep], " "), len(items)-keep, len(items))
	}
	return part
}
