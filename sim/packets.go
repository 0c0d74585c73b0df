package sim

import (
	"github.com/mqttlab/mqttlab/engine"
	"github.com/mqttlab/mqttlab/engine/packet"
)

// receiveMax is the Receive Maximum a CONNACK announces (65535 when absent
// or in 3.1.1).
func receiveMax(c *packet.Connack) uint16 {
	if c.Props.Present.Has(packet.PropReceiveMaximum) && c.Props.ReceiveMaximum > 0 {
		return c.Props.ReceiveMaximum
	}
	return 65535
}

var typeNames = [16]string{
	"?", "CONNECT", "CONNACK", "PUBLISH", "PUBACK", "PUBREC", "PUBREL", "PUBCOMP",
	"SUBSCRIBE", "SUBACK", "UNSUBSCRIBE", "UNSUBACK", "PINGREQ", "PINGRESP", "DISCONNECT", "AUTH",
}

// traceEvent writes the trace line of an event fed to n.
func (w *World) traceEvent(n *node, ev engine.Event) {
	t := &w.tr
	switch e := ev.(type) {
	case engine.BytesReceived:
		t.begin(w.sched.now, n.name, "bytes")
		t.int(" conn=", int64(e.Conn))
		t.int(" n=", int64(len(e.Data)))
	case engine.ConnOpened:
		t.begin(w.sched.now, n.name, "opened")
		t.int(" conn=", int64(e.Conn))
	case engine.ConnClosed:
		t.begin(w.sched.now, n.name, "closed")
		t.int(" conn=", int64(e.Conn))
	case engine.TimerFired:
		t.begin(w.sched.now, n.name, "timer")
		t.int(" id=", int64(e.Timer))
	case engine.Connect:
		t.begin(w.sched.now, n.name, "cmd-connect")
		t.int(" cmd=", int64(e.Cmd))
		t.int(" clean=", boolInt(e.CleanStart))
	case engine.Publish:
		t.begin(w.sched.now, n.name, "cmd-publish")
		t.int(" cmd=", int64(e.Cmd))
		t.str(" topic=", e.Topic)
		t.int(" qos=", int64(e.QoS))
		t.int(" len=", int64(len(e.Payload)))
	case engine.Subscribe:
		t.begin(w.sched.now, n.name, "cmd-subscribe")
		t.int(" cmd=", int64(e.Cmd))
		for _, s := range e.Subs {
			t.str(" filter=", s.Filter)
			t.int(" qos=", int64(s.QoS))
		}
	case engine.Unsubscribe:
		t.begin(w.sched.now, n.name, "cmd-unsubscribe")
		t.int(" cmd=", int64(e.Cmd))
	case engine.Disconnect:
		t.begin(w.sched.now, n.name, "cmd-disconnect")
		t.int(" cmd=", int64(e.Cmd))
	case engine.Ack:
		t.begin(w.sched.now, n.name, "ack")
		t.int(" delivery=", int64(e.Delivery))
	case engine.Shutdown:
		t.begin(w.sched.now, n.name, "shutdown")
	default:
		t.begin(w.sched.now, n.name, "event?")
	}
	t.end()
}

// traceAction writes the trace line of an action of n.
func (w *World) traceAction(n *node, a engine.Action) {
	t := &w.tr
	switch a := a.(type) {
	case engine.Dial:
		t.begin(w.sched.now, n.name, "> dial")
	case engine.Send:
		t.begin(w.sched.now, n.name, "> send")
		t.int(" conn=", int64(a.Conn))
		if a.Packet != nil {
			tracePacket(t, a.Packet)
		}
		t.int(" n=", int64(len(a.Data)))
	case engine.CloseConn:
		t.begin(w.sched.now, n.name, "> close")
		t.int(" conn=", int64(a.Conn))
		if a.Reason != nil {
			t.str(" reason=", a.Reason.Error())
		}
	case engine.Persist:
		t.begin(w.sched.now, n.name, "> persist")
		t.int(" op=", int64(a.Op))
		t.str(" key=", a.Key)
		t.int(" len=", int64(len(a.Value)))
		t.int(" sync=", boolInt(a.Sync))
	case engine.SetTimer:
		t.begin(w.sched.now, n.name, "> timer")
		t.int(" id=", int64(a.Timer))
		t.int(" at=", int64(a.At))
	case engine.CancelTimer:
		t.begin(w.sched.now, n.name, "> cancel")
		t.int(" id=", int64(a.Timer))
	case engine.Deliver:
		t.begin(w.sched.now, n.name, "> deliver")
		t.int(" delivery=", int64(a.Delivery))
		t.str(" topic=", a.Msg.Topic)
		t.int(" qos=", int64(a.Msg.QoS))
		t.int(" dup=", boolInt(a.Msg.Dup))
		t.int(" id=", int64(a.Msg.PacketID))
	case engine.Complete:
		t.begin(w.sched.now, n.name, "> complete")
		t.int(" cmd=", int64(a.Cmd))
		t.int(" result=", int64(a.Result))
		t.int(" session=", boolInt(a.Session))
		if a.Err != nil {
			t.str(" err=", a.Err.Error())
		}
	default:
		t.begin(w.sched.now, n.name, "> action?")
	}
	t.end()
}

// tracePacket appends a packet's type and identifying fields.
func tracePacket(t *tracer, p packet.Packet) {
	typ := p.Type()
	if typ < 16 {
		t.word(typeNames[typ])
	}
	switch p := p.(type) {
	case *packet.Publish:
		t.int(" id=", int64(p.PacketID))
		t.int(" qos=", int64(p.QoS))
		t.int(" dup=", boolInt(p.Dup))
	case *packet.Puback:
		t.int(" id=", int64(p.PacketID))
		t.int(" rc=", int64(p.Reason))
	case *packet.Pubrec:
		t.int(" id=", int64(p.PacketID))
		t.int(" rc=", int64(p.Reason))
	case *packet.Pubrel:
		t.int(" id=", int64(p.PacketID))
		t.int(" rc=", int64(p.Reason))
	case *packet.Pubcomp:
		t.int(" id=", int64(p.PacketID))
		t.int(" rc=", int64(p.Reason))
	case *packet.Connack:
		t.int(" sp=", boolInt(p.SessionPresent))
		t.int(" rc=", int64(p.Reason))
	}
}
