package model

import "fmt"

// sub is one persistent QoS>=1 subscription of the history.
type sub struct {
	node   string
	filter string
	step   int  // the Subscribed event (SUBACK received)
	ended  bool // unsubscribed, or the session cleaned, at any later step
}

// accepted is one QoS>=1 message a publisher app handed to its engine.
type accepted struct {
	step  int // the Accepted event
	ref   int // the broker's first Received PUBLISH of it, else step
	node  string
	msg   string
	topic string
	qos   uint8
	clean bool // its publisher cleaned its session before the message was acknowledged
}

// CheckNoLoss checks invariant 1 (SPEC-NOTES 1, 10; seeds
// coremqtt-unclean-session-retransmits and mosquitto-ack-after-callback):
// every message a publisher accepted at QoS>=1 is delivered to every
// subscriber that held a matching persistent subscription at QoS>=1
// [MQTT-3.1.2-5] [MQTT-4.5.0-1] [MQTT-4.3.2-4] [MQTT-4.3.3-8].
//
// A subscription counts for a message when its Subscribed event (the SUBACK,
// so the broker had installed it) comes before the broker first Received the
// message's PUBLISH, or before Accepted if the broker never received it: the
// broker then had to route it. A subscription stops counting when the
// subscriber later unsubscribes that filter or connects with Clean Start=1;
// a message stops counting when its publisher connects with Clean Start=1
// before it is acknowledged (the spec lets the session go). A publisher's
// own subscriptions are not required to get its messages (No Local may be
// set). A Session
// Present=0 answer to Clean Start=0 does not excuse anything: the broker lost
// the session.
//
// Loss is only judged at the end of a history whose liveness phase ran
// (LivenessStart present); a violation is reported at the message's Accepted
// step. A Stuck run is judged too: its undelivered messages are reported
// here as losses (and the Stuck event by NoStuck), so an experiment counts a
// lost message as lost whatever stopped it.
func CheckNoLoss(h *History) []Violation {
	if livenessStart(h) < 0 {
		return nil
	}
	msgs, subs := collectMessages(h), collectSubs(h)
	delivered := map[[2]string]bool{}
	for i := range h.Events {
		if e := &h.Events[i]; e.Kind == Delivered {
			delivered[[2]string{e.Node, e.Msg}] = true
		}
	}
	var out []Violation
	for _, m := range msgs {
		if m.clean {
			continue
		}
		for _, s := range subs {
			if s.ended || s.step >= m.ref || s.node == m.node || !Matches(s.filter, m.topic) {
				continue
			}
			if delivered[[2]string{s.node, m.msg}] {
				continue
			}
			out = append(out, Violation{Step: m.step, Invariant: NoLoss, Node: s.node,
				Reason: fmt.Sprintf("msg %q (%s, %q, QoS %d) never delivered to %s, subscribed to %q at step %d",
					m.msg, m.node, m.topic, m.qos, s.node, s.filter, s.step)})
			delivered[[2]string{s.node, m.msg}] = true // once per subscriber
		}
	}
	return out
}

func hasKind(h *History, k Kind) bool {
	for i := range h.Events {
		if h.Events[i].Kind == k {
			return true
		}
	}
	return false
}

// collectMessages lists the QoS>=1 Accepted messages in history order.
func collectMessages(h *History) []*accepted {
	var msgs []*accepted
	byMsg := map[string]*accepted{}
	pending := map[string][]*accepted{} // publisher -> accepted, not acknowledged
	for i := range h.Events {
		e := &h.Events[i]
		switch {
		case e.Kind == Accepted && e.QoS >= 1:
			m := &accepted{step: i, ref: i, node: e.Node, msg: e.Msg, topic: e.Topic, qos: e.QoS}
			msgs = append(msgs, m)
			byMsg[e.Msg] = m
			pending[e.Node] = append(pending[e.Node], m)
		case e.Kind == Acknowledged:
			pending[e.Node] = removeMsg(pending[e.Node], e.Msg)
		case e.Kind == Connected && e.CleanStart:
			for _, m := range pending[e.Node] {
				m.clean = true
			}
			pending[e.Node] = nil
		case e.Kind == Received && e.Node == BrokerNode && e.Packet.Type == PUBLISH:
			if m := byMsg[e.Packet.Msg]; m != nil && m.ref == m.step && e.Peer == m.node {
				m.ref = i
			}
		}
	}
	return msgs
}

func removeMsg(ms []*accepted, msg string) []*accepted {
	for i, m := range ms {
		if m.msg == msg {
			return append(ms[:i], ms[i+1:]...)
		}
	}
	return ms
}

// collectSubs lists the persistent QoS>=1 subscriptions in history order.
func collectSubs(h *History) []*sub {
	var subs []*sub
	live := map[string][]*sub{} // node -> subscriptions not yet ended
	for i := range h.Events {
		e := &h.Events[i]
		switch e.Kind {
		case Subscribed:
			if e.Persistent && e.QoS >= 1 {
				s := &sub{node: e.Node, filter: e.Filter, step: i}
				subs = append(subs, s)
				live[e.Node] = append(live[e.Node], s)
			}
		case Unsubscribed:
			for _, s := range live[e.Node] {
				if s.filter == e.Filter {
					s.ended = true
				}
			}
		case Connected:
			if e.CleanStart {
				for _, s := range live[e.Node] {
					s.ended = true
				}
				live[e.Node] = nil
			}
		}
	}
	return subs
}
