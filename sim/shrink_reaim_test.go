package sim

import (
	"slices"
	"testing"

	"github.com/mqttlab/mqttlab/model"
)

// TestNearestFirst: 0..n-1 by distance from x, the lower first.
func TestNearestFirst(t *testing.T) {
	for _, c := range []struct {
		x, n int
		want []int
	}{
		{0, 4, []int{0, 1, 2, 3}},
		{2, 5, []int{2, 1, 3, 0, 4}},
		{4, 5, []int{4, 3, 2, 1, 0}},
		{7, 3, []int{2, 1, 0}}, // x beyond the range
		{0, 0, []int{}},
	} {
		if got := nearestFirst(c.x, c.n); !slices.Equal(got, c.want) {
			t.Errorf("nearestFirst(%d, %d) = %v, want %v", c.x, c.n, got, c.want)
		}
	}
}

// TestReaims: an armed crash is re-aimed at every other skip on both
// sides of an action (a callback point keeps its kind), an armed cut at
// every other skip, and other ops not at all.
func TestReaims(t *testing.T) {
	for _, c := range []struct {
		op    string
		n     int    // variants
		first string // the nearest one
		last  string
	}{
		{"crash broker point=after-action skip=6", 2*reaimSkips - 1, "crash broker point=after-action skip=5", "crash broker point=before-action skip=31"},
		{"crash broker point=before-action", 2*reaimSkips - 1, "crash broker point=before-action skip=1", "crash broker point=after-action skip=31"},
		{"crash s1 point=callback-pre skip=1", reaimSkips - 1, "crash s1 point=callback-pre", "crash s1 point=callback-pre skip=31"},
		{"reset p1 on=pubcomp", reaimSkips - 1, "reset p1 on=pubcomp skip=1", "reset p1 on=pubcomp skip=31"},
		{"half-open p1 told=client on=publish skip=2", reaimSkips - 1, "half-open p1 told=client on=publish skip=1", "half-open p1 told=client on=publish skip=31"},
		{"crash broker", 0, "", ""},
		{"reset p1", 0, "", ""},
		{"publish p1 topic=t/a qos=1 msg=p1-1", 0, "", ""},
	} {
		op, err := ParseOp(c.op)
		if err != nil {
			t.Fatal(err)
		}
		got := reaims(op)
		if len(got) != c.n {
			t.Errorf("%s: %d re-aims, want %d", c.op, len(got), c.n)
			continue
		}
		if c.n > 0 && (got[0].String() != c.first || got[len(got)-1].String() != c.last) {
			t.Errorf("%s: re-aims from %q to %q, want %q to %q", c.op, got[0], got[len(got)-1], c.first, c.last)
		}
		if slices.Contains(got, op) {
			t.Errorf("%s: the op itself is among its re-aims", c.op)
		}
	}
}

// TestDeleteReaim: testdata/reaim-half-delete-22.plan is what the
// shrinker made of half-delete seed 22 without re-aiming (139 ops to 31):
// no single deletion keeps its SessionPresent violation, since every one
// moves the crash point one of its two armed crashes fires at. With the
// armed crashes re-aimed, deleteReaim takes it to at most 20 ops.
func TestDeleteReaim(t *testing.T) {
	cfg, plan := readPlanFile(t, "reaim-half-delete-22.plan")
	cfg.SkipCheck = true
	fails := func(ops []Op) bool {
		return slices.ContainsFunc(specJudge(Run(cfg, Plan{Header: plan.Header, Ops: ops})), func(v model.Violation) bool {
			return v.Invariant == model.SessionPresent
		})
	}
	if !fails(plan.Ops) {
		t.Fatal("the plan does not violate SessionPresent")
	}
	for i := range plan.Ops {
		ops := without(plan.Ops, i, i+1)
		if ValidatePlan(cfg, Plan{Ops: ops}) == nil && fails(ops) {
			t.Fatalf("deleting op %d (%s) keeps the failure: the plan no longer shows why re-aiming is needed", i+1, plan.Ops[i])
		}
	}
	s := &shrinker{opts: ShrinkOptions{Judge: specJudge}, scen: mustScenario(cfg.Scenario), seen: map[uint64]bool{}, stage: len(reseedTries) - 1}
	if err := s.start(cfg, plan); err != nil {
		t.Fatal(err)
	}
	for before := -1; before != s.accepted; {
		before = s.accepted
		s.deleteReaim()
	}
	if len(s.ops) > 20 || !fails(s.ops) {
		t.Errorf("deleteReaim left %d ops (want at most 20), failing: %v\n%s", len(s.ops), fails(s.ops), Plan{Header: HeaderOf(s.cfg), Ops: s.ops})
	}
	s.stage = 0
	runs := s.runs
	s.deleteReaim()
	if s.runs != runs {
		t.Error("deleteReaim ran candidates before the last stage")
	}
}
