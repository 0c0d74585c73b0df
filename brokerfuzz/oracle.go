package brokerfuzz

import (
	"fmt"
	"sort"
	"strings"

	"github.com/mqttlab/mqttlab/engine/packet"
)

// The oracles, each named in reports.
const (
	// OracleCrash: the broker's process ended during the case.
	OracleCrash = "crash"
	// OracleHang: after the case, a fresh connection's CONNECT and PINGREQ
	// were not answered.
	OracleHang = "hang"
	// OracleLeftOpen: a packet the codec refuses (a malformed packet or a
	// protocol error) did not close its connection.
	OracleLeftOpen = "left-open"
	// OracleAnswered: the broker acknowledged a packet the codec refuses.
	OracleAnswered = "answered"
	// OracleForwarded: the content of a refused packet reached a subscriber.
	OracleForwarded = "forwarded"
	// OracleReason: a v5 broker refused with a reason code below 0x80.
	OracleReason = "success-reason"
	// OracleUnanswered: a valid request on a connection the broker kept open
	// got no answer.
	OracleUnanswered = "unanswered"
	// OracleGrowth: memory or file descriptors grew under cases that hold
	// nothing once their connections closed.
	OracleGrowth = "growth"
)

// Violation is one oracle's verdict on one run of a case.
type Violation struct {
	Oracle string `json:"oracle"`
	// Rule is the spec's statement broken ([MQTT-x.y.z-n] or §x.y.z).
	Rule string `json:"rule"`
	// Cause is the codec's rule for the refused packet ("" when none).
	Cause string `json:"cause,omitempty"`
	// Packet is the type of the packet at stake.
	Packet string `json:"packet,omitempty"`
	Conn   int    `json:"conn,omitempty"`
	// Version is the protocol version of the connection (4 or 5).
	Version byte   `json:"version,omitempty"`
	Step    int    `json:"step"`
	Detail  string `json:"detail"`
}

// Key groups violations that have one cause. A violation about a refused
// packet is keyed by the rule the broker did not enforce (its 5.0 number,
// so the same statement in both versions is one key): whether the broker
// then kept the connection open, answered the packet or forwarded it, and
// whichever packet types broke it, a maintainer fixes one missing check.
// Any other violation is keyed by its oracle, rule and packet type.
func (v Violation) Key() string {
	if v.Cause != "" {
		return "not enforced [" + Canon(v.Cause, v.Version) + "]"
	}
	return v.Oracle + " [" + v.Rule + "] " + v.Packet
}

// judge applies every oracle to one run.
func judge(c Case, e *expect, obs *observation) []Violation {
	var out []Violation
	if obs.crashed != "" {
		out = append(out, Violation{Oracle: OracleCrash, Rule: "§4.8", Step: len(c.Steps) - 1, Detail: "the broker's process ended: " + obs.crashed})
	}
	if obs.hung != "" {
		out = append(out, Violation{Oracle: OracleHang, Rule: "MQTT-3.12.4-1", Step: len(c.Steps) - 1, Detail: obs.hung})
	}
	if obs.crashed != "" || obs.hung != "" {
		return out // a dead broker answers nothing: the other oracles would only echo it
	}
	watched := obs.watched()
	conns := make([]int, 0, len(e.conns))
	for conn := range e.conns {
		conns = append(conns, conn)
	}
	sort.Ints(conns)
	for _, conn := range conns {
		ce, co := e.conns[conn], obs.conns[conn]
		if co == nil || co.dialErr != nil {
			continue
		}
		if ce.refused >= 0 {
			if ce.judged() {
				out = append(out, refusedOracles(c, e, ce, co, conn, watched, obs.tm)...)
			}
		} else if !ce.disconnected && !co.isClosed() && !co.unreadable() {
			for _, q := range co.unanswered(ce.requests) {
				out = append(out, Violation{Oracle: OracleUnanswered, Rule: answerRule(ce.version, q.want), Packet: requestOf(q.want), Conn: conn, Step: q.step,
					Detail: fmt.Sprintf("conn %d: %s of step %d got no %s (id %d) in %v, and the connection stayed open", conn, requestOf(q.want), q.step+1, q.want, q.id, obs.tm.Answer)})
			}
		}
	}
	return out
}

// normative reports whether the codec's rule is a normative statement
// ([MQTT-x.y.z-n]). A refusal the codec cites by section only (§x.y.z:
// the standard states the packet's form without a MUST, as 3.1.1 does for
// the shortest Remaining Length or a PINGREQ's empty body) is not judged:
// a broker that reads such a packet leniently breaks no statement it can
// be shown.
func normative(rule string) bool { return strings.HasPrefix(rule, "MQTT-") }

// refusedOracles judges a connection whose packet at ce.refused the codec
// refused.
func refusedOracles(c Case, e *expect, ce *connExpect, co *connObs, conn int, watched []string, tm Timing) []Violation {
	var out []Violation
	v := func(oracle, rule, detail string) Violation {
		return Violation{Oracle: oracle, Rule: rule, Cause: ce.rule, Packet: ce.typ.String(), Conn: conn, Version: ce.version, Step: ce.refused,
			Detail: fmt.Sprintf("conn %d step %d (%s): the codec refuses it [%s] %s; %s", conn, ce.refused+1, c.Steps[ce.refused].Note, ce.rule, ce.msg, detail)}
	}
	if !co.isClosed() {
		out = append(out, v(OracleLeftOpen, closeRule(ce.version), "the connection was still open "+tm.Close.String()+" later"))
	}
	if ack := answered(ce, co); ack != "" {
		out = append(out, v(OracleAnswered, closeRule(ce.version), "the broker answered it with "+ack))
	}
	for _, p := range co.after(ce.refused) {
		if ce.version == 5 && (p.typ == packet.DISCONNECT || p.typ == packet.CONNACK && ce.typ == packet.CONNECT) && p.reason != 0 && p.reason < 0x80 {
			out = append(out, v(OracleReason, closeRule(ce.version), fmt.Sprintf("the broker sent %s with reason %s, a success code", p.typ, p.reason)))
			break
		}
	}
	if e.attributable(ce) {
		for _, m := range watched {
			if m == ce.marker {
				out = append(out, v(OracleForwarded, closeRule(ce.version), "a subscriber on another connection received its payload "+m))
				break
			}
		}
	}
	return out
}

// unreadable reports whether the codec refused the broker's answers on
// the connection: what came after them cannot be told, so no request there
// is judged unanswered.
func (co *connObs) unreadable() bool {
	co.mu.Lock()
	defer co.mu.Unlock()
	return co.undecodable != ""
}

// after returns what the connection received once step i was written.
func (co *connObs) after(i int) []received {
	co.mu.Lock()
	defer co.mu.Unlock()
	var out []received
	for _, p := range co.recv {
		if p.afterStep >= i {
			out = append(out, p)
		}
	}
	return out
}

// answered names the broker's acknowledgement of the refused packet ("" if
// none came): for a CONNECT or PINGREQ, a CONNACK 0x00 or PINGRESP more
// than the valid CONNECTs or PINGREQs before it ask for; for the others,
// the answer its type calls for with its packet id.
func answered(ce *connExpect, co *connObs) string {
	want := map[packet.Type]int{}
	for _, q := range ce.requests {
		want[q.want]++
	}
	got := map[packet.Type]int{}
	for _, p := range co.after(0) {
		if p.typ == packet.CONNACK && p.reason == 0 || p.typ == packet.PINGRESP {
			got[p.typ]++
		}
		if ack := answers(ce, p); ack != "" {
			return ack
		}
	}
	switch {
	case ce.typ == packet.CONNECT && got[packet.CONNACK] > want[packet.CONNACK]:
		return "CONNACK 0x00 (accepted)"
	case ce.typ == packet.PINGREQ && got[packet.PINGRESP] > want[packet.PINGRESP]:
		return "PINGRESP"
	}
	return ""
}

// answers names the acknowledgement p is of the refused packet ("" if it
// is none): the answer its type calls for, with its packet id.
func answers(ce *connExpect, p received) string {
	switch {
	case !ce.idOK:
		return ""
	case ce.typ == packet.PUBLISH && (p.typ == packet.PUBACK || p.typ == packet.PUBREC) && p.id == ce.id && p.reason < 0x80:
		return fmt.Sprintf("%s id %d", p.typ, p.id)
	case ce.typ == packet.SUBSCRIBE && p.typ == packet.SUBACK && p.id == ce.id && p.reason < 0x80:
		return fmt.Sprintf("SUBACK id %d granting %s", p.id, p.reason)
	case ce.typ == packet.UNSUBSCRIBE && p.typ == packet.UNSUBACK && p.id == ce.id && p.reason < 0x80:
		return fmt.Sprintf("UNSUBACK id %d", p.id)
	case ce.typ == packet.PUBREL && p.typ == packet.PUBCOMP && p.id == ce.id:
		return fmt.Sprintf("PUBCOMP id %d", p.id)
	}
	return ""
}

// requestOf names the request that want answers.
func requestOf(want packet.Type) string {
	return map[packet.Type]string{packet.CONNACK: "CONNECT", packet.PUBACK: "PUBLISH QoS 1", packet.PUBREC: "PUBLISH QoS 2",
		packet.PUBCOMP: "PUBREL", packet.SUBACK: "SUBSCRIBE", packet.UNSUBACK: "UNSUBSCRIBE", packet.PINGRESP: "PINGREQ"}[want]
}
