package sim

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/mqttlab/mqttlab/engine"
	"github.com/mqttlab/mqttlab/model"
)

// TestArmedCutParse: a reset or half-open op armed for a packet type
// prints and parses back; an unknown type, or on= on another kind, is
// refused with an error naming it.
func TestArmedCutParse(t *testing.T) {
	cases := []struct {
		text string
		want Op
		err  string
	}{
		{text: "reset p1 on=pubcomp", want: Op{Kind: OpReset, Node: "p1", On: 7}},
		{text: "half-open s1 told=broker on=pubrel", want: Op{Kind: OpHalfOpen, Node: "s1", Told: 2, On: 6}},
		{text: "half-open s1 on=publish", want: Op{Kind: OpHalfOpen, Node: "s1", On: 3}},
		{text: "reset p1 on=pubcmp", err: `packet type "pubcmp"`},
		{text: "reset p1 on=reserved0", err: `packet type "reserved0"`},
		{text: "reset p1 on=publish skip=2", want: Op{Kind: OpReset, Node: "p1", On: 3, Skip: 2}},
		{text: "crash s1 on=publish", err: `does not take argument "on=publish"`},
		{text: "reset p1 skip=1", err: "skip= needs on="},
		{text: "reset p1 on=publish skip=300", err: "skip=300"},
	}
	for _, c := range cases {
		op, err := ParseOp(c.text)
		switch {
		case c.err != "":
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("ParseOp(%q): %v, want an error with %s", c.text, err, c.err)
			}
		case err != nil || op != c.want || op.String() != c.text:
			t.Errorf("ParseOp(%q) = %+v (%q), %v; want %+v", c.text, op, op.String(), err, c.want)
		}
	}
}

// TestArmedCut: an armed reset or half-open cuts the client's connection
// as the next packet of its type is sent on it, after skip others (the
// Sent is the event just before the Cut, at the same time), once; the
// client reconnects.
func TestArmedCut(t *testing.T) {
	cases := []struct {
		arm    Op
		reason string
		pkt    string // the type and message (or packet id) of the packet cut
	}{
		{Op{Kind: OpReset, Node: "p1", On: 4}, "reset", "4 1"},
		{Op{Kind: OpHalfOpen, Node: "p1", Told: 1, On: 4}, "half-open", "4 1"},
		{Op{Kind: OpReset, Node: "p1", On: 3}, "reset", "3 p1-1"},
		{Op{Kind: OpReset, Node: "p1", On: 3, Skip: 1}, "reset", "3 p1-2"},
	}
	for _, c := range cases {
		w, err := New(Config{Seed: 1, Scenario: "small"})
		if err != nil {
			t.Fatal(err)
		}
		ops := []Op{{Kind: OpConnect, Node: "p1"}, {Kind: OpAdvance, D: 100 * ms}, c.arm,
			{Kind: OpPublish, Node: "p1", Topic: "t/a", QoS: 0, Msg: "p1-1"}, {Kind: OpAdvance, D: 100 * ms},
			{Kind: OpPublish, Node: "p1", Topic: "t/a", QoS: 1, Msg: "p1-2"}, {Kind: OpAdvance, D: 3 * engine.Second},
			{Kind: OpPublish, Node: "p1", Topic: "t/a", QoS: 1, Msg: "p1-3"}, {Kind: OpAdvance, D: 3 * engine.Second}}
		for _, op := range ops {
			if err := w.Apply(op); err != nil {
				t.Fatal(err)
			}
		}
		var cuts []string
		connected := 0
		evs := w.History().Events
		for i, e := range evs {
			switch {
			case e.Kind == model.Cut && e.Node == "p1":
				p := evs[i-1].Packet
				id := p.Msg
				if id == "" {
					id = strconv.Itoa(int(p.ID))
				}
				typ, skip := cutPacket(evs[:i], e)
				cuts = append(cuts, fmt.Sprintf("%s %d %s (typ %d skip %d)", e.Reason, p.Type, id, typ, skip))
			case e.Kind == model.Connected && e.Node == "p1":
				connected++
			}
		}
		want := []string{fmt.Sprintf("%s %s (typ %d skip 0)", c.reason, c.pkt, c.arm.On)}
		if fmt.Sprint(cuts) != fmt.Sprint(want) || connected != 2 {
			t.Errorf("%s: cuts %q and %d connects, want %q and 2", c.arm, cuts, connected, want)
		}
	}
}

// TestArmedCutReplaysRandomOne: with resets and half-opens still random,
// arming a reset or half-open op (told the side the run told) for the
// packet type whose sending drew each random one, just before it, replays that run exactly (the armed cut makes the random one's
// draws): the same cuts at the same times, the same violations; and the
// armed cuts are not taken for random ones again.
func TestArmedCutReplaysRandomOne(t *testing.T) {
	cfg, plan := presetSeed(t, "legacy-retransmit", 522)
	orig := Run(cfg, plan)
	_, resets := randomFaults(orig.History(), orig.crashSkips, nil, nil, nil)
	if len(resets) == 0 {
		t.Fatal("no random reset in legacy-retransmit seed 522")
	}
	for _, r := range resets {
		if r.op.On == 0 || r.op.Kind == OpHalfOpen && r.op.Told == 0 {
			t.Fatalf("random cut %+v: want its packet type (and told side)", r)
		}
	}
	pinned := plan
	pinned.Ops = insertTimed(plan.Ops, armedCuts(resets))
	again := Run(cfg, pinned)
	cutText := func(r Result) string {
		var b strings.Builder
		for _, e := range r.History().Events {
			if e.Kind == model.Cut {
				b.WriteString(strconv.FormatInt(e.Time, 10) + " " + e.Node + " " + e.Reason + "\n")
			}
		}
		return b.String()
	}
	if a, b := cutText(orig), cutText(again); a != b {
		t.Errorf("cuts differ:\n%s\n--- armed ---\n%s", a, b)
	}
	if a, b := fmt.Sprint(specJudge(orig)), fmt.Sprint(specJudge(again)); a != b {
		t.Errorf("violations differ:\n%s\n--- armed ---\n%s", a, b)
	}
	armedCrashes, armedCutOps := armedOps(pinned.Ops)
	if _, left := randomFaults(again.History(), again.crashSkips, plannedResets(pinned.Ops), armedCrashes, armedCutOps); len(left) != 0 {
		t.Errorf("armed cuts taken for random ones: %v", left)
	}
}

// TestArmedCrashSkip: a crash op armed with skip=N lets N crash points of
// its kind pass and crashes at the next (a subscriber's delivery callback
// of its N+1-th message); skip= prints and parses back and needs point=.
func TestArmedCrashSkip(t *testing.T) {
	op, err := ParseOp("crash s1 point=callback-pre skip=1")
	if err != nil || op != (Op{Kind: OpCrash, Node: "s1", Point: model.CrashInCallbackPre, Skip: 1}) || op.String() != "crash s1 point=callback-pre skip=1" {
		t.Fatalf("ParseOp: %+v %v", op, err)
	}
	if _, err := ParseOp("crash s1 skip=1"); err == nil || !strings.Contains(err.Error(), "skip= needs point=") {
		t.Errorf("skip without point: %v", err)
	}
	for skip, want := range []int{0, 1, 2} {
		cfg, plan := smallPlan(t)
		plan.Ops = append([]Op{{Kind: OpCrash, Node: "s1", Point: model.CrashInCallbackPre, Skip: uint8(skip)}}, plan.Ops...)
		r := Run(cfg, plan)
		delivered, before := 0, -1
		for _, e := range r.History().Events {
			switch {
			case e.Kind == model.Delivered && e.Node == "s1":
				delivered++
			case e.Kind == model.Crash && e.Node == "s1" && before < 0:
				before = delivered
			}
		}
		if r.Err != nil || before != want {
			t.Errorf("skip=%d: err %v, crashed after %d deliveries, want %d", skip, r.Err, before, want)
		}
	}
}

// TestArmedCrashSkipReplaysRandomOne: a random crash that came after other
// crash points of its kind at its time (skip > 0) is replayed exactly by a
// crash op armed 1ns before with that skip: the same crashes at the same
// times, the same violations.
func TestArmedCrashSkipReplaysRandomOne(t *testing.T) {
	cfg, plan := presetSeed(t, "legacy-pubrel", 1278)
	orig := Run(cfg, plan)
	crashes, _ := randomFaults(orig.History(), orig.crashSkips, nil, nil, nil)
	if !slices.ContainsFunc(crashes, func(c timedOp) bool { return c.op.Skip > 0 }) {
		t.Fatalf("no random crash with skip > 0 in legacy-pubrel seed 1278: %v", crashes)
	}
	pinned := plan
	pinned.Ops = insertTimed(plan.Ops, armed(crashes))
	again := Run(cfg, pinned)
	sameCrashesAndVerdicts(t, orig, again)
}

// TestShrunkPlanArmedSkip replays testdata/shrunk-pubrel-skip.plan, what
// the shrinker made of legacy-pubrel seed 320 (412 ops): the broker crashes
// after its fourth action at one instant (point=after-action skip=3), as
// the random crash point did, and only there: with any other skip the
// PUBREL the legacy client cannot answer is never sent.
func TestShrunkPlanArmedSkip(t *testing.T) {
	cfg, plan := readPlanFile(t, "shrunk-pubrel-skip.plan")
	cfg.SkipCheck = true
	at := slices.IndexFunc(plan.Ops, func(o Op) bool { return o.Kind == OpCrash && o.Skip == 3 })
	if at < 0 {
		t.Fatalf("no crash op with skip=3:\n%s", plan)
	}
	for skip := uint8(0); skip <= 5; skip++ {
		p := plan
		p.Ops = slices.Clone(plan.Ops)
		p.Ops[at].Skip = skip
		got := slices.ContainsFunc(specJudge(Run(cfg, p)), func(v model.Violation) bool { return v.Invariant == model.PubrelAnswered })
		if got != (skip == 3) {
			t.Errorf("skip=%d: PubrelAnswered violated %v, want %v", skip, got, skip == 3)
		}
	}
}

// TestShrinkArmsFaults: legacy-pubrel seed 320 needs a broker crash at one
// crash point among several at the same instant; pinned as a crash op
// armed with its skip, it shrinks to at most 20 ops (to 96 with faults
// pinned at the next point of their kind).
func TestShrinkArmsFaults(t *testing.T) {
	cfg, plan := presetSeed(t, "legacy-pubrel", 320)
	s, err := Shrink(cfg, plan, ShrinkOptions{Judge: specJudge})
	if err != nil {
		t.Fatal(err)
	}
	if err := checkShrunk(s, model.PubrelAnswered, 20, specJudge); err != nil {
		t.Fatalf("%v\n%s", err, s.Plan)
	}
	if !slices.ContainsFunc(s.Plan.Ops, func(o Op) bool { return o.Kind == OpCrash && o.Point != 0 }) {
		t.Errorf("no armed crash op:\n%s", s.Plan)
	}
}

// sameCrashesAndVerdicts checks that a plan with its random faults pinned
// (again) replays the original run's crashes and restarts and its
// violations.
func sameCrashesAndVerdicts(t *testing.T, orig, again Result) {
	t.Helper()
	crashText := func(r Result) string {
		var b strings.Builder
		for _, e := range r.History().Events {
			if e.Kind == model.Crash || e.Kind == model.Restart {
				b.WriteString(strconv.FormatInt(e.Time, 10) + " " + e.Node + "\n")
			}
		}
		return b.String()
	}
	if a, b := crashText(orig), crashText(again); a != b {
		t.Errorf("crashes differ:\n%s\n--- armed ---\n%s", a, b)
	}
	if a, b := fmt.Sprint(specJudge(orig)), fmt.Sprint(specJudge(again)); a != b {
		t.Errorf("violations differ:\n%s\n--- armed ---\n%s", a, b)
	}
}
