package model

import (
	"fmt"
	"sort"
)

// sub is one persistent QoS>=1 subscription of the history, from the step
// the broker installed it to the step it stopped (see collectSubs).
type sub struct {
	node   string
	filter string
	step   int    // took effect: the broker's SUBACK for it, else the Subscribed event
	end    int    // stopped taking new messages, or -1
	how    subEnd // what stopped it
}

// subEnd says what ended a subscription.
type subEnd uint8

const (
	endReplaced subEnd = iota + 1 // a SUBSCRIBE of the same filter replaced it [MQTT-3.8.4-3]
	endUnsub                      // UNSUBSCRIBE [MQTT-3.10.4-2]
	endClean                      // a clean start discarded the session [MQTT-3.1.2-4]
)

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
// A subscription counts for a message when it took effect at the broker (see
// collectSubs) before the broker first Received the message's PUBLISH, or
// before Accepted if the broker never received it: the broker then had to
// route it. It stops counting for messages the broker receives after it
// ended. Of the messages routed before the end, a replacement (a SUBSCRIBE
// of the same filter) excuses none: "the flow of publications MUST NOT be
// interrupted" [MQTT-3.8.4-3]; an UNSUBSCRIBE excuses those the broker had
// not started to send (it "MAY continue to deliver any existing messages
// buffered", but MUST complete the QoS 1/2 deliveries it started
// [MQTT-3.10.4-3]); a clean start excuses all (the session is discarded
// [MQTT-3.1.2-4]). A message stops counting when its publisher connects with
// Clean Start=1 before it is acknowledged (the spec lets the session go). A
// publisher's own subscriptions are not required to get its messages (No
// Local may be set). A Session Present=0 answer to Clean Start=0 does not
// excuse anything: the broker lost the session.
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
	msgs, scan := collectMessages(h), collectSubs(h)
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
		for _, s := range scan.subs {
			if !s.owes(m, scan.firstSent) || s.node == m.node || !Matches(s.filter, m.topic) {
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

// owes reports whether the broker had to deliver m through s: the broker
// got m while s was in effect, and the way s ended does not excuse it.
// firstSent holds the step the broker first sent each node a PUBLISH of a
// message.
func (s *sub) owes(m *accepted, firstSent map[[2]string]int) bool {
	if s.step >= m.ref {
		return false
	}
	if s.end < 0 {
		return true
	}
	if m.ref >= s.end {
		return false
	}
	switch s.how {
	case endReplaced:
		return true
	case endUnsub:
		at, ok := firstSent[[2]string{s.node, m.msg}]
		return ok && at < s.end
	}
	return false
}

// nodeID names one packet id of one client.
type nodeID struct {
	node string
	id   uint16
}

// subScan is collectSubs' state while it walks the history.
type subScan struct {
	subs       []*sub
	live       map[[2]string]*sub // node, filter -> the subscription in effect
	persistent map[string]bool    // node -> Persistent of its first Subscribed event
	req        map[nodeID]Packet  // SUBSCRIBE/UNSUBSCRIBE the broker received, by client and id
	brokerAck  map[nodeID]int     // step of the broker's last SUBACK/UNSUBACK sent, by client and id
	clientAck  map[string]uint16  // client -> id of the last SUBACK/UNSUBACK it received
	firstSent  map[[2]string]int  // node, msg -> the broker's first PUBLISH of msg to node
}

// collectSubs lists the persistent QoS>=1 subscriptions of the history in
// the order they took effect. A SUBSCRIBE or UNSUBSCRIBE takes effect when
// the broker processes it, whether or not its SUBACK/UNSUBACK reaches the
// client: at the broker's Sent SUBACK/UNSUBACK (sent once the change is
// installed). When the broker's Received SUBSCRIBE/UNSUBSCRIBE records the
// Filter, that is where the change is learnt from; otherwise from the
// client's Subscribed/Unsubscribed event, dated back to the broker's ack of
// the same packet id. A SUBSCRIBE of a filter the client already holds
// replaces that subscription [MQTT-3.8.4-3], at whatever QoS: a downgrade to
// QoS 0 ends the QoS>=1 one. Whether the client's session is persistent is
// read from its Subscribed events. A clean start (the broker's Received
// CONNECT with Clean Start, or a Connected event with CleanStart) ends every
// subscription of the client.
func collectSubs(h *History) *subScan {
	s := &subScan{
		live: map[[2]string]*sub{}, persistent: map[string]bool{}, req: map[nodeID]Packet{},
		brokerAck: map[nodeID]int{}, clientAck: map[string]uint16{}, firstSent: map[[2]string]int{},
	}
	for i := range h.Events {
		if e := &h.Events[i]; e.Kind == Subscribed {
			if _, ok := s.persistent[e.Node]; !ok {
				s.persistent[e.Node] = e.Persistent
			}
		}
	}
	for i := range h.Events {
		s.step(i, &h.Events[i])
	}
	return s
}

func (s *subScan) step(i int, e *Event) {
	p := &e.Packet
	switch {
	case e.Kind == Received && e.Node == BrokerNode:
		switch p.Type {
		case SUBSCRIBE, UNSUBSCRIBE:
			s.req[nodeID{e.Peer, p.ID}] = *p
		case CONNECT:
			if p.Clean {
				s.endAll(e.Peer, i)
			}
		}
	case e.Kind == Sent && e.Node == BrokerNode:
		s.brokerSent(i, e)
	case e.Kind == Received && (p.Type == SUBACK || p.Type == UNSUBACK):
		s.clientAck[e.Node] = p.ID
	case e.Kind == Subscribed:
		s.persistent[e.Node] = e.Persistent
		if at, ok := s.ackOf(e, i, SUBSCRIBE); ok {
			s.subscribe(e.Node, e.Filter, e.QoS, at)
		}
	case e.Kind == Unsubscribed:
		if at, ok := s.ackOf(e, i, UNSUBSCRIBE); ok {
			s.end(e.Node, e.Filter, at, endUnsub)
		}
	case e.Kind == Connected && e.CleanStart:
		s.endAll(e.Node, i)
	}
}

// brokerSent follows the broker's SUBACK, UNSUBACK and PUBLISH packets.
func (s *subScan) brokerSent(i int, e *Event) {
	p := &e.Packet
	k := nodeID{e.Peer, p.ID}
	switch p.Type {
	case SUBACK, UNSUBACK:
		s.brokerAck[k] = i
		r, ok := s.req[k]
		if !ok || r.Filter == "" {
			return
		}
		if p.Type == SUBACK && r.Type == SUBSCRIBE {
			s.subscribe(e.Peer, r.Filter, r.QoS, i)
		} else if p.Type == UNSUBACK && r.Type == UNSUBSCRIBE {
			s.end(e.Peer, r.Filter, i, endUnsub)
		}
	case PUBLISH:
		k := [2]string{e.Peer, p.Msg}
		if _, ok := s.firstSent[k]; !ok && p.Msg != "" {
			s.firstSent[k] = i
		}
	}
}

// ackOf returns the step a Subscribed/Unsubscribed event took effect: the
// broker's ack of the packet id the client last received an ack for. ok is
// false when the broker's Received request already recorded the change.
func (s *subScan) ackOf(e *Event, i int, want uint8) (int, bool) {
	id, ok := s.clientAck[e.Node]
	if !ok {
		return i, true
	}
	k := nodeID{e.Node, id}
	at, acked := s.brokerAck[k]
	if !acked || at > i {
		return i, true
	}
	if r, ok := s.req[k]; ok && r.Type == want && r.Filter == e.Filter {
		return at, false
	}
	return at, true
}

// subscribe replaces node's subscription of filter at step at.
func (s *subScan) subscribe(node, filter string, qos uint8, at int) {
	s.end(node, filter, at, endReplaced)
	if qos == 0 || !s.persistent[node] {
		return
	}
	n := &sub{node: node, filter: filter, step: at, end: -1}
	s.subs = append(s.subs, n)
	s.live[[2]string{node, filter}] = n
}

// end stops node's subscription of filter at step at.
func (s *subScan) end(node, filter string, at int, how subEnd) {
	k := [2]string{node, filter}
	n := s.live[k]
	if n == nil {
		return
	}
	delete(s.live, k)
	n.end, n.how = at, how
}

// endAll ends every subscription of node at step at (a clean start).
func (s *subScan) endAll(node string, at int) {
	for _, k := range sortedLive(s.live) {
		if k[0] == node {
			s.end(node, k[1], at, endClean)
		}
	}
}

// sortedLive returns the keys of live in order.
func sortedLive(live map[[2]string]*sub) [][2]string {
	keys := make([][2]string, 0, len(live))
	for k := range live {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i][0] != keys[j][0] {
			return keys[i][0] < keys[j][0]
		}
		return keys[i][1] < keys[j][1]
	})
	return keys
}
