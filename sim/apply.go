package sim

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/mqttlab/mqttlab/engine"
	"github.com/mqttlab/mqttlab/engine/packet"
	"github.com/mqttlab/mqttlab/model"
)

// Apply carries out one plan op at the current virtual time. Advance runs
// the world; every other op takes effect at once. An op on a node that is
// down (crashed and not yet restarted) is skipped and traced, since random
// crash points can take a node down at any time; an op naming an unknown
// node, or the broker where a client is needed, is an error.
func (w *World) Apply(op Op) error {
	if op.Kind == OpAdvance {
		w.RunFor(op.D)
		return nil
	}
	if op.Kind == OpNode {
		return w.declare(op)
	}
	n, err := w.node(op.Node)
	if err != nil {
		return err
	}
	if n.broker && clientOnly(op.Kind) {
		return fmt.Errorf("%w: %s acts on a client, not the broker", ErrPlan, op.Kind)
	}
	w.tr.begin(w.sched.now, n.name, "op")
	var text [128]byte
	w.tr.putByte(' ')
	w.tr.putBytes(op.appendText(text[:0]))
	w.tr.end()
	switch op.Kind {
	case OpCrash:
		if op.Point != 0 {
			w.arm(n, op.Point, op.Skip)
			break
		}
		w.crash(n, model.CrashBetweenSteps)
	case OpRestart:
		w.restart(n)
	case OpStop:
		w.stop(n)
	case OpPartition:
		w.partition(n)
	case OpHeal:
		w.heal(n)
	case OpSlow:
		n.slow = op.D
		if op.D > 0 {
			w.stats.Faults["slow"]++
		}
	case OpLoseQoS2:
		w.loseQoS2(n)
	case OpReset, OpHalfOpen:
		w.cut(n, op)
	default:
		w.applyClient(n, op)
	}
	return nil
}

// clientOnly reports whether an op kind needs a client.
func clientOnly(k OpKind) bool {
	switch k {
	case OpConnect, OpSubscribe, OpUnsubscribe, OpPublish, OpDisconnect, OpPartition, OpHeal, OpSlow, OpLoseQoS2, OpReset, OpHalfOpen:
		return true
	}
	return false
}

// applyClient carries out a workload op on client n.
func (w *World) applyClient(n *node, op Op) {
	if op.Kind == OpConnect {
		n.app.wantConn = true
	}
	if op.Kind == OpDisconnect {
		n.app.wantConn = false
	}
	if op.Kind == OpPublish {
		w.stats.Published += max(1, int(op.Count))
	}
	if !n.up {
		w.tr.begin(w.sched.now, n.name, "skip-down")
		w.tr.end()
		return
	}
	switch op.Kind {
	case OpConnect:
		w.connect(n, op.Clean)
	case OpSubscribe:
		id := n.app.command(cmdInfo{kind: cmdSubscribe, tid: w.strs.id(op.Topic), qos: op.QoS})
		w.step(n, engine.Subscribe{Cmd: id, Subs: []packet.Subscription{{Filter: op.Topic, QoS: packet.QoS(op.QoS),
			NoLocal: op.Flags&FlagNoLocal != 0, RetainAsPublished: op.Flags&FlagRAP != 0, RetainHandling: op.RH}}, SubscriptionID: op.SubID})
	case OpUnsubscribe:
		id := n.app.command(cmdInfo{kind: cmdUnsubscribe, tid: w.strs.id(op.Topic)})
		w.step(n, engine.Unsubscribe{Cmd: id, Filters: []string{op.Topic}})
	case OpPublish:
		w.publishAll(n, op)
	case OpDisconnect:
		id := n.app.command(cmdInfo{kind: cmdDisconnect})
		w.step(n, engine.Disconnect{Cmd: id, Abnormal: op.Flags&FlagAbnormal != 0, Reason: packet.ReasonCode(op.Reason)})
	}
}

// publishAll hands op's message to client n's engine, or with a count its
// Count messages, Msg.1 to Msg.Count, one command each, in order (a burst:
// the client takes them all at one virtual time, with no random crash
// point meanwhile).
func (w *World) publishAll(n *node, op Op) {
	if op.Count == 0 {
		w.publish(n, op)
		return
	}
	base := op.Msg
	var name []byte
	w.inBurst = true
	for i := uint32(1); i <= op.Count && n.up; i++ {
		name = strconv.AppendUint(append(append(name[:0], base...), '.'), uint64(i), 10)
		op.Msg = string(name)
		w.publish(n, op)
	}
	w.inBurst = false
}

// publish hands op's message to client n's engine. The payload is the
// message id, or nothing (an empty publish: the history's message id is
// then ""), or the id, a space and Pad bytes of padding.
func (w *World) publish(n *node, op Op) {
	msg, payload := op.Msg, []byte(nil)
	switch {
	case op.Flags&FlagEmpty != 0:
		msg, payload = "", []byte{}
	case op.Pad > 0:
		payload = w.bytes.cloneString(op.Msg + " " + strings.Repeat("x", int(op.Pad)))
	default:
		payload = w.bytes.cloneString(op.Msg)
	}
	expiry := uint32(op.D / engine.Second)
	id := n.app.command(cmdInfo{kind: cmdPublish, msg: w.strs.id(msg), tid: w.strs.id(op.Topic), qos: op.QoS, retain: op.Retain,
		expiry: expiry, size: uint32(len(payload))})
	w.step(n, w.evs.publish.box(engine.Publish{Cmd: id, Topic: op.Topic, Payload: payload, QoS: packet.QoS(op.QoS), Retain: op.Retain,
		MessageExpiry: expiry}))
}

// declare carries out a node op: it adds the client it names, or
// configures the broker before anything has connected.
func (w *World) declare(op Op) error {
	w.tr.begin(w.sched.now, op.Node, "op")
	var text [128]byte
	w.tr.putByte(' ')
	w.tr.putBytes(op.appendText(text[:0]))
	w.tr.end()
	if op.Node == BrokerName {
		b := w.nodes[0]
		if len(w.conns) > 0 || !b.up {
			return fmt.Errorf("%w: node broker must come before any connection", ErrPlan)
		}
		b.cfg = op.Cfg
		w.declareAccess(b)
		return w.boot(b)
	}
	if _, ok := w.byName[op.Node]; ok {
		return fmt.Errorf("%w: node %s is declared twice (or is a client of scenario %s)", ErrPlan, op.Node, w.scen.Name)
	}
	_, err := w.addNode(op.Node, op.Cfg)
	return err
}

// loseQoS2 reboots client n having lost its incoming QoS2 records: a crash
// that keeps only synced writes, the records the engine names as incoming
// QoS2 state dropped, then a restart.
func (w *World) loseQoS2(n *node) {
	if !n.up {
		return
	}
	w.stats.Faults["lose-qos2"]++
	w.crash(n, model.CrashBetweenSteps)
	dropped := n.disk.Drop(isIncomingQoS2Key)
	w.log.add(hrec{kind: model.StateLost, time: int64(w.sched.now), node: n.nameID, reason: w.strs.id(fmt.Sprintf("incoming QoS2 state lost (%d records)", dropped))})
	w.restart(n)
}

// cut carries out a reset or half-open op on client n: now, or armed for
// a packet type.
func (w *World) cut(n *node, op Op) {
	switch {
	case op.On != 0:
		w.armCut(n, op)
	case op.Kind == OpReset:
		w.resetClient(n)
	default:
		w.halfOpenClient(n, op.Told)
	}
}

// resetClient resets client n's connection, if it has one that is still
// open (as the network's reset fault does to the connection of a packet).
func (w *World) resetClient(n *node) {
	if c := w.getConn(n.app.conn); c != nil && !c.reset && !c.blackhole {
		w.reset(c)
	}
}
