package findings

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mqttlab/mqttlab/model"
)

// demands says in plain words what each invariant asks.
var demands = map[model.Invariant]string{
	model.NoLoss:          "A QoS 1 or 2 message the broker accepted must reach every subscriber whose session held a matching subscription when the broker took it.",
	model.QoS2ExactlyOnce: "A QoS 2 message reaches a subscriber's application at most once, and nothing reaches it that no publisher sent.",
	model.Retransmit:      "A PUBLISH is resent only on a new connection of a session both sides kept, with DUP=1, its packet id and payload, in the original order, and never once its PUBREL was sent.",
	model.PubrelAnswered:  "Every PUBREL gets its PUBCOMP on the same connection.",
	model.PacketIDUnique:  "A new PUBLISH, SUBSCRIBE or UNSUBSCRIBE never takes a packet id still in flight in the same direction.",
	model.SendQuota:       "A sender keeps its unacknowledged QoS 1 and 2 PUBLISHes within the receiver's Receive Maximum.",
	model.Order:           "Messages of one publisher on one topic at one QoS reach each subscriber in the order the broker received them.",
	model.NoStuck:         "Once every fault has healed, the run goes quiet with nothing owed left pending.",
	model.SessionPresent:  "A broker answers Session Present=1 exactly when it holds the client's session (Clean Start 0), and a client that holds none closes on Session Present=1.",
	model.GrantedQoS:      "The broker sends each copy at the lower of the publish QoS and the QoS it granted the subscription.",
	model.Unsubscribe:     "Nothing the broker receives after it acknowledged an UNSUBSCRIBE of a client's last matching filter reaches that client.",
	model.Overlap:         "A client gets one copy of a publication however many of its subscriptions match it.",
	model.Retained:        "A SUBACK brings the last retained message of each matching topic, never a cleared or replaced one.",
	model.MessageExpiry:   "No copy is first sent after its Message Expiry Interval ran out.",
	model.ClientKeepAlive: "A connected client never stays silent longer than its Keep Alive.",
	model.SharedDelivery:  "Each message on a shared subscription reaches one member of the group.",
	model.FlowResume:      "A copy the broker owes a connected client is sent once the client's receive window opens; it is never parked for good.",
	model.BrokerKeepAlive: "The broker closes a connection for keep-alive only after 1.5 times the Keep Alive without a packet.",
	model.SessionExpiry:   "A broker discards a session once its Session Expiry Interval passed after its connection closed.",
	model.TopicAlias:      "Topic Aliases stay within the maximum the client announced and are set before use on the same connection.",
	model.Will:            "A will is published after an abnormal end of its connection, once its delay ran out, and never otherwise.",
	model.SubscriptionIDs: "A PUBLISH carries the Subscription Identifiers of the subscriptions it is sent for.",
	model.MaxPacketSize:   "The broker never sends a PUBLISH larger than the client's Maximum Packet Size.",
}

// reading is the finding's paragraph: what the rule asks, who broke it
// how often, the clearest case in the run's numbering, what its flow shows
// (the crashes and reconnects inside it, and a copy the client already
// had), and what it explains.
func reading(f *Finding, h *model.History, cut boundCut) string {
	if f.Subject == CutSubject {
		return fmt.Sprintf("The tester stopped waiting at its -liveness bound while the subjects were still delivering: %d deliveries in the last second before it gave up. "+
			"The violations listed under this finding concern messages and packets that were still moving in the liveness phase; the history ends before they could settle, so it does not show them lost or unanswered. "+
			"This is a limit of the run, not a finding against the broker or its clients: rerun with a longer -liveness to judge them.", cut.deliveries)
	}
	var b strings.Builder
	b.WriteString(demands[f.Invariant])
	c := &f.Occurrences[f.Clearest]
	who := "The broker"
	if f.Subject != model.BrokerNode {
		who = "Client " + strings.Join(f.Nodes, ", ")
	}
	times := "once"
	if f.Count() > 1 {
		times = fmt.Sprintf("%d times", f.Count())
	}
	verb := "broke it"
	if f.Invariant == model.NoLoss || f.Invariant == model.NoStuck {
		verb = "was owed what it never had"
	}
	fmt.Fprintf(&b, " %s %s %s; the clearest case, at step %d: %s.", who, verb, times, c.Step, strings.TrimSuffix(Reword(c.Reason, f.Version), "."))
	if blame := lossBlame(f, h, c); blame != "" {
		b.WriteString(" " + blame)
	}
	if facts := flowFacts(f, h, c); facts != "" {
		b.WriteString(" " + facts)
	}
	if x := f.explainsText(); x != "" {
		fmt.Fprintf(&b, " It %s: %s.", x, ruleWhys(f))
	}
	return b.String()
}

// flowFacts says what the clearest occurrence's flow shows around it:
// broker crashes and restarts, client crashes, reconnects and the Session
// Present they got, and deliveries of its messages the client already had.
func flowFacts(f *Finding, h *model.History, c *model.Violation) string {
	var brokerCrash, clientCrash, connects int
	var sp []string
	for _, i := range f.Excerpt {
		e := &h.Events[i]
		switch {
		case e.Kind == model.Crash && e.Node == model.BrokerNode:
			brokerCrash++
		case e.Kind == model.Crash:
			clientCrash++
		case e.Kind == model.Connected:
			connects++
			sp = append(sp, fmt.Sprintf("%s sp=%d", e.Node, boolInt(e.SessionPresent)))
		}
	}
	var parts []string
	if brokerCrash > 0 {
		parts = append(parts, fmt.Sprintf("%d broker crash(es)", brokerCrash))
	}
	if clientCrash > 0 {
		parts = append(parts, fmt.Sprintf("%d client crash(es)", clientCrash))
	}
	if connects > 0 {
		parts = append(parts, fmt.Sprintf("%d reconnect(s) (%s)", connects, strings.Join(sp, ", ")))
	}
	out := ""
	if len(parts) > 0 {
		out = "Its flow holds " + strings.Join(parts, ", ") + "."
	}
	if had := alreadyHad(h, c); had != "" {
		out = strings.TrimSpace(out + " " + had)
	}
	return out
}

// alreadyHad notes when the violation's client had one of its messages
// delivered before the violation's step: a "never sent" is then about a
// further copy, not the message.
func alreadyHad(h *model.History, v *model.Violation) string {
	if v.Invariant != model.FlowResume && v.Invariant != model.NoStuck {
		return ""
	}
	msgs, clients := violationMsgs(h, v), violationClients(h, v)
	for i := 0; i < v.Step && i < len(h.Events); i++ {
		e := &h.Events[i]
		if e.Kind == model.Delivered && slices.Contains(clients, e.Node) && slices.Contains(msgs, e.Msg) {
			return fmt.Sprintf("%s's application already had %s (delivered at step %d): what was never sent is a further copy the broker still held for it, not the message.", e.Node, e.Msg, i)
		}
	}
	return ""
}

// ruleWhys joins the reasons of the rules by which the finding explains
// its consequences.
func ruleWhys(f *Finding) string {
	var whys []string
	for _, c := range f.Explains {
		if w := Rules[c.Rule].Why; !slices.Contains(whys, w) {
			whys = append(whys, w)
		}
	}
	return strings.Join(whys, "; ")
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// lossBlame says, for a NoLoss finding, who lost the message by the shape
// of its flow: the broker that never sent it, the broker that sent a copy
// never acknowledged and never again, or the client that acknowledged it
// (owning it) and whose application never had it, with the crash between.
func lossBlame(f *Finding, h *model.History, c *model.Violation) string {
	if f.Invariant != model.NoLoss {
		return ""
	}
	switch {
	case strings.HasSuffix(f.Pattern, "["+ShapeNotPublished+"]"):
		return "Its publisher's application handed the message over and the publisher never sent it to the broker: the publisher lost it, not the broker."
	case strings.HasSuffix(f.Pattern, "["+ShapeNeverSent+"]"):
		return fmt.Sprintf("The broker accepted the message and never sent %s a copy: the broker lost it.", c.Node)
	case strings.HasSuffix(f.Pattern, "["+ShapeUnacked+"]"):
		return fmt.Sprintf("The broker sent %s a copy that %s never acknowledged, and never completed the delivery after: the broker dropped its duty to resend.", c.Node, c.Node)
	case strings.HasSuffix(f.Pattern, "["+ShapeAcked+"]"):
		s := fmt.Sprintf("%s acknowledged a copy (PUBACK or PUBREC), so it owned the message, and its application never had it", c.Node)
		for _, i := range f.Excerpt {
			if e := &h.Events[i]; e.Kind == model.Crash && e.Node == c.Node {
				return s + fmt.Sprintf("; %s crashed at step %d and kept no record of it: the client lost it.", c.Node, i)
			}
		}
		return s + ": the client lost it."
	}
	return ""
}
