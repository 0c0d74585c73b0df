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

// typeWords are the " TYPE" words of packets traced without fields.
var typeWords = func() (ws [16]*tword) {
	for i, n := range typeNames {
		ws[i] = tw(" " + n)
	}
	return ws
}()

// The fixed pieces of the trace lines: a line's what with its first key
// ("> send conn="), then the keys of its other fields. Each is copied as
// one block.
var (
	wBytes, wOpened, wClosed = tw("bytes conn="), tw("opened conn="), tw("closed conn=")
	wTimer, wCmdConnect      = tw("timer id="), tw("cmd-connect cmd=")
	wCmdPublish              = tw("cmd-publish cmd=")
	wCmdSubscribe            = tw("cmd-subscribe cmd=")
	wCmdUnsubscribe          = tw("cmd-unsubscribe cmd=")
	wCmdDisconnect, wAck     = tw("cmd-disconnect cmd="), tw("ack delivery=")
	wShutdown, wEventUnknown = tw("shutdown"), tw("event?")

	wDial, wSend, wClose      = tw("> dial"), tw("> send conn="), tw("> close conn=")
	wPersist, wSetTimer       = tw("> persist op="), tw("> timer id=")
	wCancel, wDeliver         = tw("> cancel id="), tw("> deliver delivery=")
	wComplete, wActionUnknown = tw("> complete cmd="), tw("> action?")

	kN, kClean, kTopic, kQoS = tw(" n="), tw(" clean="), tw(" topic="), tw(" qos=")
	kLen, kFilter, kReason   = tw(" len="), tw(" filter="), tw(" reason=")
	kKey, kSync, kAt, kDup   = tw(" key="), tw(" sync="), tw(" at="), tw(" dup=")
	kID, kResult, kSession   = tw(" id="), tw(" result="), tw(" session=")
	kErr, kRC                = tw(" err="), tw(" rc=")

	kPublishID, kPubackID  = tw(" PUBLISH id="), tw(" PUBACK id=")
	kPubrecID, kPubrelID   = tw(" PUBREC id="), tw(" PUBREL id=")
	kPubcompID, kConnackSP = tw(" PUBCOMP id="), tw(" CONNACK sp=")
)

// traceEvent writes the trace line of an event fed to n.
func (w *World) traceEvent(n *node, ev engine.Event) {
	t, now := &w.tr.tape, w.sched.now
	switch e := ev.(type) {
	case engine.BytesReceived:
		t.beginW(now, n.name, wBytes)
		t.num(int64(e.Conn))
		t.intW(kN, int64(len(e.Data)))
	case engine.ConnOpened:
		t.beginW(now, n.name, wOpened)
		t.num(int64(e.Conn))
	case engine.ConnClosed:
		t.beginW(now, n.name, wClosed)
		t.num(int64(e.Conn))
	case engine.TimerFired:
		t.beginW(now, n.name, wTimer)
		t.num(int64(e.Timer))
	case engine.Connect:
		t.beginW(now, n.name, wCmdConnect)
		t.num(int64(e.Cmd))
		t.intW(kClean, boolInt(e.CleanStart))
	case engine.Publish:
		t.beginW(now, n.name, wCmdPublish)
		t.num(int64(e.Cmd))
		t.strW(kTopic, e.Topic)
		t.intW(kQoS, int64(e.QoS))
		t.intW(kLen, int64(len(e.Payload)))
	case engine.Subscribe:
		t.beginW(now, n.name, wCmdSubscribe)
		t.num(int64(e.Cmd))
		for _, s := range e.Subs {
			t.strW(kFilter, s.Filter)
			t.intW(kQoS, int64(s.QoS))
		}
	case engine.Unsubscribe:
		t.beginW(now, n.name, wCmdUnsubscribe)
		t.num(int64(e.Cmd))
	case engine.Disconnect:
		t.beginW(now, n.name, wCmdDisconnect)
		t.num(int64(e.Cmd))
	case engine.Ack:
		t.beginW(now, n.name, wAck)
		t.num(int64(e.Delivery))
	case engine.Shutdown:
		t.beginW(now, n.name, wShutdown)
	default:
		t.beginW(now, n.name, wEventUnknown)
	}
	t.end()
}

// traceAction writes the trace line of an action of n.
func (w *World) traceAction(n *node, a engine.Action) {
	t, now := &w.tr.tape, w.sched.now
	switch a := a.(type) {
	case engine.Dial:
		t.beginW(now, n.name, wDial)
	case engine.Send:
		t.beginW(now, n.name, wSend)
		t.num(int64(a.Conn))
		if a.Packet != nil {
			tracePacket(t, a.Packet)
		}
		t.intW(kN, int64(len(a.Data)))
	case engine.CloseConn:
		t.beginW(now, n.name, wClose)
		t.num(int64(a.Conn))
		if a.Reason != nil {
			t.strW(kReason, a.Reason.Error())
		}
	case engine.Persist:
		t.beginW(now, n.name, wPersist)
		t.num(int64(a.Op))
		t.strW(kKey, a.Key)
		t.intW(kLen, int64(len(a.Value)))
		t.intW(kSync, boolInt(a.Sync))
	case engine.SetTimer:
		t.beginW(now, n.name, wSetTimer)
		t.num(int64(a.Timer))
		t.intW(kAt, int64(a.At))
	case engine.CancelTimer:
		t.beginW(now, n.name, wCancel)
		t.num(int64(a.Timer))
	case engine.Deliver:
		t.beginW(now, n.name, wDeliver)
		t.num(int64(a.Delivery))
		t.strW(kTopic, a.Msg.Topic)
		t.intW(kQoS, int64(a.Msg.QoS))
		t.intW(kDup, boolInt(a.Msg.Dup))
		t.intW(kID, int64(a.Msg.PacketID))
	case engine.Complete:
		t.beginW(now, n.name, wComplete)
		t.num(int64(a.Cmd))
		t.intW(kResult, int64(a.Result))
		t.intW(kSession, boolInt(a.Session))
		if a.Err != nil {
			t.strW(kErr, a.Err.Error())
		}
	default:
		t.beginW(now, n.name, wActionUnknown)
	}
	t.end()
}

// tracePacket appends a packet's type and identifying fields: " TYPE" and
// the first key are one piece for the packets that have fields.
func tracePacket(t *tape, p packet.Packet) {
	switch p := p.(type) {
	case *packet.Publish:
		t.intW(kPublishID, int64(p.PacketID))
		t.intW(kQoS, int64(p.QoS))
		t.intW(kDup, boolInt(p.Dup))
	case *packet.Puback:
		t.intW(kPubackID, int64(p.PacketID))
		t.intW(kRC, int64(p.Reason))
	case *packet.Pubrec:
		t.intW(kPubrecID, int64(p.PacketID))
		t.intW(kRC, int64(p.Reason))
	case *packet.Pubrel:
		t.intW(kPubrelID, int64(p.PacketID))
		t.intW(kRC, int64(p.Reason))
	case *packet.Pubcomp:
		t.intW(kPubcompID, int64(p.PacketID))
		t.intW(kRC, int64(p.Reason))
	case *packet.Connack:
		t.intW(kConnackSP, boolInt(p.SessionPresent))
		t.intW(kRC, int64(p.Reason))
	default:
		if typ := p.Type(); typ < 16 {
			t.wordW(typeWords[typ])
		}
	}
}
