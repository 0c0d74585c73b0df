package findings

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mqttlab/mqttlab/model"
)

// kindNames name the model's event kinds as history.jsonl does.
var kindNames = map[model.Kind]string{
	model.Accepted: "Accepted", model.Acknowledged: "Acknowledged", model.Sent: "Sent", model.Received: "Received",
	model.Delivered: "Delivered", model.Subscribed: "Subscribed", model.Unsubscribed: "Unsubscribed",
	model.ConnOpened: "ConnOpened", model.ConnClosed: "ConnClosed", model.Connected: "Connected",
	model.Crash: "Crash", model.Restart: "Restart", model.StateLost: "StateLost", model.Partition: "Partition",
	model.Heal: "Heal", model.LivenessStart: "LivenessStart", model.Quiescent: "Quiescent", model.Stuck: "Stuck",
	model.Failed: "Failed", model.Cut: "Cut", model.Refused: "Refused", model.Cutoff: "Cutoff", model.Dropped: "Dropped", model.ACL: "ACL",
}

// packetNames name MQTT packet types.
var packetNames = [...]string{"?", "CONNECT", "CONNACK", "PUBLISH", "PUBACK", "PUBREC", "PUBREL", "PUBCOMP",
	"SUBSCRIBE", "SUBACK", "UNSUBSCRIBE", "UNSUBACK", "PINGREQ", "PINGRESP", "DISCONNECT", "AUTH"}

// KindName names an event kind ("Sent").
func KindName(k model.Kind) string {
	if n, ok := kindNames[k]; ok {
		return n
	}
	return fmt.Sprintf("Kind(%d)", k)
}

// PacketName names a packet type ("PUBREL").
func PacketName(t uint8) string {
	if int(t) < len(packetNames) {
		return packetNames[t]
	}
	return fmt.Sprintf("type %d", t)
}

// FormatEvent is one event as a readable line: step, kind, who, and what.
// A QoS is printed only where the packet or event has one (a PUBLISH, a
// SUBSCRIBE, an application's message): acknowledgements have none.
func FormatEvent(step int, e *model.Event) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%6d %-13s %s", step, KindName(e.Kind), e.Node)
	if e.Peer != "" {
		b.WriteString("->" + e.Peer)
	}
	if p := e.Packet; p.Type != 0 && (e.Kind == model.Sent || e.Kind == model.Received) {
		fmt.Fprintf(&b, " %s", PacketName(p.Type))
		if p.ID != 0 {
			fmt.Fprintf(&b, " id=%d", p.ID)
		}
		switch p.Type {
		case model.PUBLISH:
			fmt.Fprintf(&b, " qos=%d dup=%v msg=%s", p.QoS, p.Dup, p.Msg)
		case model.CONNACK:
			fmt.Fprintf(&b, " sp=%v reason=%#x", p.Sessions, p.Reason)
		case model.CONNECT:
			fmt.Fprintf(&b, " clean=%v", p.Clean)
		case model.SUBSCRIBE:
			fmt.Fprintf(&b, " %s qos=%d", p.Filter, p.QoS)
		case model.PUBACK, model.PUBREC, model.PUBREL, model.PUBCOMP, model.DISCONNECT:
			if p.Reason != 0 {
				fmt.Fprintf(&b, " reason=%#x", p.Reason)
			}
		}
	}
	if e.Msg != "" {
		fmt.Fprintf(&b, " msg=%s", e.Msg)
		if e.Kind == model.Accepted || e.Kind == model.Delivered {
			fmt.Fprintf(&b, " qos=%d", e.QoS)
		}
	}
	switch e.Kind {
	case model.Connected:
		fmt.Fprintf(&b, " clean=%v sp=%v had_state=%v", e.CleanStart, e.SessionPresent, e.HadState)
	case model.Subscribed:
		fmt.Fprintf(&b, " %s qos=%d persistent=%v", e.Filter, e.QoS, e.Persistent)
	}
	if e.Reason != "" {
		b.WriteString(" " + clip(e.Reason, 200))
	}
	return b.String()
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// Title is a finding's headline: "Retransmit by the broker, 42 times".
func (f *Finding) Title() string {
	who := "the " + f.Subject
	if f.Subject == CutSubject {
		return fmt.Sprintf("%s: the run was cut at its liveness bound while still delivering (the tester's bound, not a verdict on the subjects)", f.Invariant)
	}
	if f.Subject != model.BrokerNode {
		who += " (" + strings.Join(f.Nodes, ", ") + ")"
	}
	times := "once"
	if n := f.Count(); n > 1 {
		times = fmt.Sprintf("%d times", n)
	}
	by := "by"
	if f.Invariant == model.NoLoss || f.Invariant == model.NoStuck {
		by = "owed to" // the node is who was owed, not who failed
	}
	return fmt.Sprintf("%s %s %s, %s", f.Invariant, by, who, times)
}

// explainsText is "explains QoS2ExactlyOnce 41, Order 17" or "".
func (f *Finding) explainsText() string {
	var parts []string
	for _, c := range f.ExplainedCounts() {
		parts = append(parts, fmt.Sprintf("%s %d", c.Invariant, c.N))
	}
	if len(parts) == 0 {
		return ""
	}
	return "explains " + strings.Join(parts, ", ")
}

// Line is the finding in one line of at most width bytes: its number,
// title, what it explains and its clearest occurrence's reason.
func (f *Finding) Line(n, width int) string {
	s := fmt.Sprintf("%d. %s", n, f.Title())
	if x := f.explainsText(); x != "" {
		s += " (" + x + ")"
	}
	c := f.Occurrences[f.Clearest]
	s += fmt.Sprintf(": step %d: %s", c.Step, Reword(c.Reason, f.Version))
	return clip(s, width-3)
}

// Markdown writes the findings as findings.md: per finding its headline,
// clauses, reading, first and clearest occurrences, the violations it
// explains (the first of each invariant, and how many) and the flow of
// its clearest occurrence.
func Markdown(h *model.History, fs []Finding, total int) string {
	var b strings.Builder
	b.WriteString("# Findings\n\n")
	explained := 0
	for i := range fs {
		explained += len(fs[i].Explains)
	}
	if len(fs) == 0 {
		b.WriteString("No violation: nothing to find.\n")
		return b.String()
	}
	fmt.Fprintf(&b, "%d violations in %d findings (%d of them explained by an earlier cause); protocol version %s, clauses in its numbering.\n\n",
		total, len(fs), explained, VersionName(fs[0].Version))
	for i := range fs {
		writeFinding(&b, h, i+1, &fs[i])
	}
	return b.String()
}

func writeFinding(b *strings.Builder, h *model.History, n int, f *Finding) {
	fmt.Fprintf(b, "## %d. %s\n\n", n, f.Title())
	if x := f.explainsText(); x != "" {
		fmt.Fprintf(b, "It %s (listed below, not as findings of their own).\n\n", x)
	}
	fmt.Fprintf(b, "- **Clauses (%s):** %s\n", VersionName(f.Version), strings.Join(f.Clauses, ", "))
	first, clear := f.Occurrences[f.First], f.Occurrences[f.Clearest]
	fmt.Fprintf(b, "- **First:** step %d (%s): %s\n", first.Step, first.Node, Reword(first.Reason, f.Version))
	fmt.Fprintf(b, "- **Clearest:** step %d (%s): %s\n", clear.Step, clear.Node, Reword(clear.Reason, f.Version))
	fmt.Fprintf(b, "- **Pattern:** %s\n\n", Reword(f.Pattern, f.Version))
	fmt.Fprintf(b, "%s\n\n", f.Reading)
	if len(f.Explains) > 0 {
		b.WriteString("Explained by it:\n\n")
		shown := map[model.Invariant]bool{}
		for _, c := range f.ExplainedCounts() {
			for _, x := range f.Explains {
				if x.Violation.Invariant != c.Invariant || shown[c.Invariant] {
					continue
				}
				shown[c.Invariant] = true
				fmt.Fprintf(b, "- %s × %d (%s); the first at step %d (%s): %s\n", c.Invariant, c.N, Rules[x.Rule].Why,
					x.Violation.Step, x.Violation.Node, Reword(x.Violation.Reason, f.Version))
			}
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(b, "Flow of the clearest occurrence (step %d; `*` marks the events the violation cites):\n\n```\n", clear.Step)
	cited := map[int]bool{}
	for _, i := range clear.Events {
		cited[i] = true
	}
	for _, i := range f.Excerpt {
		mark := " "
		if cited[i] {
			mark = "*"
		}
		fmt.Fprintf(b, "%s%s\n", mark, FormatEvent(i, &h.Events[i]))
	}
	b.WriteString("```\n\n")
	if f.Refused > 0 {
		fmt.Fprintf(b, "(%d events of connection attempts that got no CONNACK, while the broker was down or refused them, are left out.)\n\n", f.Refused)
	}
}

// jsonFinding is a finding in findings.json.
type jsonFinding struct {
	Invariant   string            `json:"invariant"`
	Subject     string            `json:"subject"`
	Nodes       []string          `json:"nodes,omitempty"`
	Count       int               `json:"count"`
	Pattern     string            `json:"pattern"`
	Version     string            `json:"version"`
	Clauses     []string          `json:"clauses"`
	First       jsonViolation     `json:"first"`
	Clearest    jsonViolation     `json:"clearest"`
	Steps       []int             `json:"steps"`
	Explains    []jsonConsequence `json:"explains,omitempty"`
	Excerpt     []int             `json:"excerpt"`
	Refused     int               `json:"refused_attempt_events_left_out,omitempty"`
	ExcerptText []string          `json:"excerpt_text"`
	Reading     string            `json:"reading"`
}

type jsonViolation struct {
	Invariant string `json:"invariant"`
	Step      int    `json:"step"`
	Node      string `json:"node"`
	Reason    string `json:"reason"`
	Events    []int  `json:"events"`
}

type jsonConsequence struct {
	jsonViolation
	Rule string `json:"rule"`
}

func toJSONViolation(v model.Violation, version uint8) jsonViolation {
	return jsonViolation{Invariant: v.Invariant.String(), Step: v.Step, Node: v.Node, Reason: Reword(v.Reason, version), Events: v.Events}
}

// JSON is the findings as findings.json: an array of findings, each with
// every occurrence's step and every consequence.
func JSON(h *model.History, fs []Finding) ([]byte, error) {
	out := make([]jsonFinding, 0, len(fs))
	for i := range fs {
		f := &fs[i]
		j := jsonFinding{Invariant: f.Invariant.String(), Subject: f.Subject, Nodes: f.Nodes, Count: f.Count(),
			Pattern: Reword(f.Pattern, f.Version), Version: VersionName(f.Version), Clauses: f.Clauses,
			First: toJSONViolation(f.Occurrences[f.First], f.Version), Clearest: toJSONViolation(f.Occurrences[f.Clearest], f.Version),
			Excerpt: f.Excerpt, Refused: f.Refused, Reading: f.Reading}
		for _, v := range f.Occurrences {
			j.Steps = append(j.Steps, v.Step)
		}
		for _, c := range f.Explains {
			j.Explains = append(j.Explains, jsonConsequence{toJSONViolation(c.Violation, f.Version), Rules[c.Rule].Why})
		}
		for _, x := range f.Excerpt {
			j.ExcerptText = append(j.ExcerptText, FormatEvent(x, &h.Events[x]))
		}
		out = append(out, j)
	}
	return json.MarshalIndent(out, "", "  ")
}
