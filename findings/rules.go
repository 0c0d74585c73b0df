package findings

import "github.com/mqttlab/mqttlab/model"

// Scope says what a cause and its consequence must share.
type Scope uint8

// The scopes of the cause->consequence rules.
const (
	// SameMessage: the consequence concerns one of the cause's messages
	// and one of its clients (the same copy of the same message).
	SameMessage Scope = iota + 1
	// SameClient: the consequence concerns one of the cause's clients,
	// whatever the message: the cause misled everything after it on that
	// client's session.
	SameClient
	// Unsettled: the consequence's message or packet was still moving in
	// the liveness phase of a run cut at its bound (cut.go); link applies
	// this rule itself, before the others.
	Unsettled
)

// Rule says that a violation of Cause explains a violation of one of
// Effects that shares Scope with it and comes no later than it (anywhere,
// for the invariants judged at the end of the run).
type Rule struct {
	Cause   model.Invariant
	Effects []model.Invariant
	Scope   Scope
	Why     string // how the cause brings the effect about, in words
}

// Rules are the explicit cause->consequence rules, tried in order; the
// first rule and, within it, the earliest cause that fits wins. A cause is
// never the effect of its own rule, and the rules form no cycle (a
// consequence's cause is looked up among violations that are not
// themselves consequences first, see link).
var Rules = []Rule{
	{model.Retransmit, []model.Invariant{model.QoS2ExactlyOnce, model.Order, model.Overlap}, SameMessage,
		"a PUBLISH resent where the spec forbids it reaches the receiver as a new message: it is delivered again, out of its order, and reads as another first copy"},
	{model.PacketIDUnique, []model.Invariant{model.QoS2ExactlyOnce, model.Order, model.NoLoss, model.Overlap}, SameMessage,
		"a packet id reused while in flight makes the receiver take one message for the other: one is dropped as a duplicate or delivered twice, and the message sent again on a new id reads as another first copy"},
	{model.Overlap, []model.Invariant{model.QoS2ExactlyOnce}, SameMessage,
		"a second copy of one publication reaches the client as a second delivery"},
	{model.SessionPresent, []model.Invariant{model.NoLoss, model.QoS2ExactlyOnce, model.Order, model.NoStuck, model.FlowResume, model.Retransmit, model.PubrelAnswered}, SameClient,
		"a Session Present flag that contradicts the session makes one side drop or resend what the other still holds"},
	{model.BrokerKeepAlive, []model.Invariant{model.NoLoss, model.QoS2ExactlyOnce, model.Order, model.NoStuck, model.FlowResume}, SameClient,
		"a connection closed while it was alive cuts its deliveries short"},
	{model.FlowResume, []model.Invariant{model.NoLoss, model.NoStuck}, SameMessage,
		"a copy parked for good is never delivered"},
	{model.NoLoss, []model.Invariant{model.NoStuck}, SameClient,
		"a message never delivered leaves the liveness phase waiting for it"},
}

// endOfRun are the invariants judged when the run ends: a cause anywhere
// in the run may explain them.
var endOfRun = model.SetOf(model.NoLoss, model.NoStuck, model.FlowResume)

// ruleFor returns the index of the first rule by which a violation of
// cause may explain one of effect, or -1.
func ruleFor(cause, effect model.Invariant) int {
	for i, r := range Rules {
		if r.Cause != cause {
			continue
		}
		for _, e := range r.Effects {
			if e == effect {
				return i
			}
		}
	}
	return -1
}

// CutRule is the rule (an index into Rules) that puts the end-of-run
// violations of a run cut at its liveness bound while it was still
// delivering under the NoStuck that records the cut (see cut.go): they
// concern messages and packets still moving when the tester stopped
// looking, which the history does not show lost.
var CutRule = len(Rules) - 1

func init() {
	Rules = append(Rules, Rule{model.NoStuck, []model.Invariant{model.NoLoss, model.FlowResume, model.PubrelAnswered}, Unsettled,
		"the run was cut at the liveness bound while this message or packet was still moving: the history ends before it could settle"})
	CutRule = len(Rules) - 1
}
