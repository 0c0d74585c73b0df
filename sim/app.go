package sim

import (
	"bytes"
	"errors"
	"slices"
	"strconv"

	"github.com/mqttlab/mqttlab/engine"
	"github.com/mqttlab/mqttlab/engine/packet"
	"github.com/mqttlab/mqttlab/model"
)

// cmdKind is the kind of an application command in flight.
type cmdKind uint8

const (
	cmdConnect cmdKind = iota + 1
	cmdPublish
	cmdSubscribe
	cmdUnsubscribe
	cmdDisconnect
)

// cmdInfo is what the application remembers of a command until it completes.
// It holds no pointer (strings are ids of the run's string table), so the
// table of commands in flight is never scanned nor write-barriered.
type cmdInfo struct {
	kind   cmdKind
	msg    uint32 // publish message id, as a string id of the run
	tid    uint32 // publish topic or filter, as a string id of the run
	qos    uint8
	retain bool
	clean  bool
	expiry uint32 // publish: v5 Message Expiry Interval, seconds
	size   uint32 // publish: payload bytes
}

// clientApp is a client's publisher and subscriber applications and the
// operator that keeps it connected. Its memory (cmds) dies with a crash;
// wantConn is the operator's intent and survives.
type clientApp struct {
	cmds      cmdTable
	nextCmd   engine.CmdID // never reset, so ids stay unique across reboots
	conn      engine.ConnID
	wantConn  bool
	reconnGen uint64
	rm        uint16 // Receive Maximum from the last CONNACK received
	clean     bool   // the last Connect asked for Clean Start
	connected bool   // CONNACK accepted on the current connection
	// hasSession mirrors whether the client engine holds a session: set by
	// an accepted CONNACK, cleared when the engine sends a CONNECT with
	// Clean Start (it discards the session just before: a clean start whose
	// connection never opens keeps the session for the next Connect), and
	// after a reboot true
	// exactly when the engine's "session" record survived.
	hasSession bool
}

func newClientApp() clientApp { return clientApp{} }

// cmdTable is the commands in flight, in id order (ids only grow, so an
// append keeps the order): a handful at a time, found by binary search.
type cmdTable []cmdEntry

type cmdEntry struct {
	id engine.CmdID
	cmdInfo
}

// find returns the index of command id, or -1.
func (t cmdTable) find(id engine.CmdID) int {
	lo, hi := 0, len(t)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if t[m].id < id {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo < len(t) && t[lo].id == id {
		return lo
	}
	return -1
}

// del forgets command id. The oldest goes by reslicing: a burst's
// thousands of commands complete in order, and deleting each from the
// front by copying the rest would take quadratic time.
func (t *cmdTable) del(id engine.CmdID) {
	switch i := t.find(id); {
	case i == 0:
		(*t)[0] = cmdEntry{}
		*t = (*t)[1:]
	case i > 0:
		*t = slices.Delete(*t, i, i+1)
	}
}

// reset forgets the application's memory (a crash or stop).
func (a *clientApp) reset() {
	a.cmds = a.cmds[:0]
	a.conn = 0
	a.connected = false
	a.reconnGen++
}

// command registers a new command.
func (a *clientApp) command(ci cmdInfo) engine.CmdID {
	a.nextCmd++
	a.cmds = append(a.cmds, cmdEntry{id: a.nextCmd, cmdInfo: ci})
	return a.nextCmd
}

// connect asks client n's engine to open its session.
func (w *World) connect(n *node, clean bool) {
	if !n.up || n.app.conn != 0 {
		return
	}
	clean = clean || (n.cfg != nil && n.cfg.Clean)
	n.app.clean = clean
	id := n.app.command(cmdInfo{kind: cmdConnect, clean: clean})
	w.step(n, engine.Connect{Cmd: id, CleanStart: clean, Will: w.will(n)})
}

// will names the will message of client n's next Connect ("<client>-w<n>":
// the CONNECT's will payload, which the history's Sent CONNECT carries as
// its Msg), or returns nil for a client without one.
func (w *World) will(n *node) *engine.Will {
	if n.cfg == nil || n.cfg.Will == nil {
		return nil
	}
	c := n.cfg.Will
	n.wills++
	msg := n.name + "-w" + strconv.Itoa(n.wills)
	return &engine.Will{Topic: c.Topic, Payload: w.bytes.cloneString(msg), QoS: packet.QoS(c.QoS), Retain: c.Retain, Delay: c.Delay}
}

// clientConnLost is called when client n's connection c ends on its side:
// the operator reconnects after a backoff if it wants the client connected.
func (w *World) clientConnLost(n *node, c *conn) {
	if n.app.conn != c.id {
		return
	}
	n.app.conn = 0
	n.app.connected = false
	w.scheduleReconnect(n)
}

// scheduleReconnect arms the reconnect backoff of n.
func (w *World) scheduleReconnect(n *node) {
	if !n.app.wantConn || !n.up {
		return
	}
	n.app.reconnGen++
	d := w.rnd.Between(w.prof.BackoffMin, w.prof.BackoffMax)
	w.sched.push(item{at: w.sched.now + engine.Time(d), kind: evReconnect, node: n.idx, gen: n.app.reconnGen})
}

// handleReconnect issues Connect again when the backoff ends.
func (w *World) handleReconnect(it item) {
	n := w.nodes[it.node]
	if !n.up || !n.app.wantConn || n.app.conn != 0 || n.app.reconnGen != it.gen {
		return
	}
	w.connect(n, false)
}

// handleDeliverApp is the subscriber application's callback: take ownership
// by appending the message to its own durable log (synced), then Ack. Crash
// points sit before and after the durable write. The log keeps the message's
// id: the sim's applications publish the id as the whole payload.
func (w *World) handleDeliverApp(n *node, a engine.Deliver) {
	if w.crashPoint(n, model.CrashInCallbackPre) {
		return
	}
	msg := w.internID(msgOfPayload(a.Msg.Payload))
	n.appLog = append(n.appLog, msg)
	topic := w.strs.id(a.Msg.Topic)
	w.log.add(hrec{
		kind: model.Delivered, time: int64(w.sched.now), node: n.nameID, msg: msg, topic: topic,
		qos: uint8(a.Msg.QoS), flags: flagIf(a.Msg.Retain, evRetain),
		pkt: cpacket{typ: uint8(packet.PUBLISH), id: a.Msg.PacketID, qos: uint8(a.Msg.QoS), flags: flagIf(a.Msg.Dup, pktDup), msg: msg, topic: topic},
	})
	w.obs.delivered(w, n.idx, msg)
	if w.crashPoint(n, model.CrashInCallbackPost) {
		return
	}
	n.acks = append(n.acks, a.Delivery)
}

// handleComplete is the applications hearing a command's outcome.
func (w *World) handleComplete(n *node, a engine.Complete) {
	i := n.app.cmds.find(a.Cmd)
	now := int64(w.sched.now)
	if i < 0 {
		// A message restored from the engine's records after a crash took
		// its command from the application's memory: it may still fail,
		// too large for the broker's Maximum Packet Size [MQTT-3.2.2-15].
		if ci, ok := w.obs.restoredPublish(n.idx, a.Cmd); ok && a.Result == engine.Failed && errors.Is(a.Err, engine.ErrClientPacketTooLarge) {
			w.refused(n, a.Err, ci, now)
			w.publishTooLarge(n, a.Cmd, ci)
		}
		return
	}
	ci := n.app.cmds[i].cmdInfo
	if a.Result == engine.Failed {
		w.refused(n, a.Err, ci, now)
	}
	switch ci.kind {
	case cmdConnect:
		n.app.cmds.del(a.Cmd)
		if a.Result == engine.Acknowledged {
			n.app.connected = true
			w.log.add(hrec{kind: model.Connected, time: now, node: n.nameID, peer: w.nodes[0].nameID,
				flags:   flagIf(ci.clean, evCleanStart) | flagIf(a.Session, evSessionPresent) | flagIf(n.app.hasSession, evHadState),
				version: n.version, receiveMax: n.app.rm})
			n.app.hasSession = true
			if !a.Session {
				w.obs.sessionDiscarded(n.idx)
			}
			if ci.clean {
				w.obs.cleanStarted(n.idx)
			}
		} else if n.app.conn != 0 {
			// Refused or failed: drop the connection and try again later.
			w.scheduleReconnect(n)
		}
	case cmdPublish:
		w.handlePublishDone(n, a, ci, now)
	case cmdSubscribe:
		n.app.cmds.del(a.Cmd)
		if a.Result == engine.Acknowledged && len(a.Reasons) > 0 && !a.Reasons[0].IsError() {
			q := uint8(a.Reasons[0])
			w.log.add(hrec{kind: model.Subscribed, time: now, node: n.nameID, filter: ci.tid, qos: q, flags: flagIf(w.persistent(n), evPersistent)})
			w.obs.subscribe(n.idx, w.strs.strs[ci.tid], q) // owed while the session lives, whatever its expiry
		}
	case cmdUnsubscribe:
		n.app.cmds.del(a.Cmd)
		if a.Result == engine.Acknowledged {
			w.log.add(hrec{kind: model.Unsubscribed, time: now, node: n.nameID, filter: ci.tid})
			w.obs.unsubscribed(w, n.idx, w.strs.strs[ci.tid])
		}
	default:
		n.app.cmds.del(a.Cmd)
	}
}

// refused records model Refused when a command failed because the client
// engine's own codec refused the packet it built for it (err holds a
// *packet.Error): the world's commands are valid, so the engine built a
// bad packet, such as one with packet id 0 after its counter wrapped; or
// because the packet exceeds the broker's Maximum Packet Size (an
// *engine.PacketTooLargeError, whose size the event's Packet.Size keeps)
// [MQTT-3.2.2-15]. A failure for any other reason (not connected, session
// discarded, the broker's refusal) is not recorded.
func (w *World) refused(n *node, err error, ci cmdInfo, now int64) {
	var pe *packet.Error
	if !errors.As(err, &pe) {
		return
	}
	r := hrec{kind: model.Refused, time: now, node: n.nameID, peer: w.nodes[0].nameID, reason: w.strs.id(pe.Error())}
	switch ci.kind {
	case cmdPublish:
		r.msg, r.topic, r.qos, r.flags = ci.msg, ci.tid, ci.qos, flagIf(ci.retain, evRetain)
		r.pkt = cpacket{typ: uint8(packet.PUBLISH), qos: ci.qos}
	case cmdSubscribe:
		r.filter, r.pkt = ci.tid, cpacket{typ: uint8(packet.SUBSCRIBE), qos: ci.qos}
	case cmdUnsubscribe:
		r.filter, r.pkt = ci.tid, cpacket{typ: uint8(packet.UNSUBSCRIBE)}
	default:
		return
	}
	var tl *engine.PacketTooLargeError
	if errors.As(err, &tl) {
		r.pkt.size = tl.Size // what the broker's Maximum Packet Size refused [MQTT-3.2.2-15]
	}
	w.log.add(r)
}

// handlePublishDone records Accepted and Acknowledged of a publish.
func (w *World) handlePublishDone(n *node, a engine.Complete, ci cmdInfo, now int64) {
	switch a.Result {
	case engine.Accepted:
		w.stats.Accepted++
		w.log.add(hrec{kind: model.Accepted, time: now, node: n.nameID, msg: ci.msg, topic: ci.tid, qos: ci.qos, flags: flagIf(ci.retain, evRetain)})
		w.obs.accepted(w, n.idx, a.Cmd, &ci)
		if ci.qos == 0 {
			n.app.cmds.del(a.Cmd)
		}
	case engine.Acknowledged:
		n.app.cmds.del(a.Cmd)
		w.log.add(hrec{kind: model.Acknowledged, time: now, node: n.nameID, msg: ci.msg})
		w.obs.acknowledged(n.idx, a.Cmd)
	default:
		n.app.cmds.del(a.Cmd)
		if errors.Is(a.Err, engine.ErrClientPacketTooLarge) {
			w.publishTooLarge(n, a.Cmd, ci)
		}
	}
}

// publishTooLarge: client n's engine failed the publish of command cmd as
// too large for the broker [MQTT-3.2.2-15]; when it was Accepted first (it
// waited for a connection, and a CONNACK's limit stopped it) it never
// left, and nothing is owed of it any more.
func (w *World) publishTooLarge(n *node, cmd engine.CmdID, ci cmdInfo) {
	if _, ok := w.obs.restoredPublish(n.idx, cmd); ok {
		w.obs.acknowledged(n.idx, cmd)
		w.obs.forget(ci.msg)
	}
}

// persistent reports whether client n's session outlives outages of any
// length: the default clients ask for a session that never expires, so in
// 5.0 always; in 3.1.1 unless it connected with Clean Session. A node op
// may declare a clean or expiring session instead.
func (w *World) persistent(n *node) bool {
	return n.cfg.persistent(n.version) && (n.version == 5 || !n.app.clean)
}

// msgOfPayload is the message id a payload carries: all of it, or what
// comes before the space that starts a padded payload's padding.
func msgOfPayload(b []byte) []byte {
	if i := bytes.IndexByte(b, ' '); i >= 0 {
		return b[:i]
	}
	return b
}
