package sim

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/mqttlab/mqttlab/model"
)

// TestRunnerMatchesRun runs the golden cases on one Runner, forwards and
// then backwards (so every run inherits memory grown by a different one),
// and checks each checksum, trace and history against a fresh sim.Run; with
// and without ReuseHistories.
func TestRunnerMatchesRun(t *testing.T) {
	for _, reuse := range []bool{false, true} {
		t.Run(fmt.Sprintf("ReuseHistories=%v", reuse), func(t *testing.T) { runnerMatchesRun(t, reuse) })
	}
}

func runnerMatchesRun(t *testing.T, reuse bool) {
	type want struct {
		sum         uint64
		trace, hist string
	}
	cases := goldenCases()
	wants := make([]want, len(cases))
	for i, c := range cases {
		r := mustRun(t, c)
		wants[i] = want{r.Checksum(), r.Trace(), historySum(r.History())}
	}
	rn := Runner{ReuseHistories: reuse}
	order := make([]int, len(cases))
	for i := range order {
		order[i] = i
	}
	for pass := range 2 {
		if pass == 1 {
			slices.Reverse(order)
		}
		for _, i := range order {
			c := cases[i]
			plan, err := Generate(c)
			if err != nil {
				t.Fatal(err)
			}
			r := rn.Run(c, plan)
			if r.Err != nil {
				t.Fatal(r.Err)
			}
			got := want{r.Checksum(), r.Trace(), historySum(r.History())}
			if got != wants[i] {
				t.Errorf("pass %d, %s seed %d: the Runner's run differs from sim.Run (checksum %016x, want %016x; history %s, want %s)",
					pass, c.Profile, c.Seed, got.sum, wants[i].sum, got.hist, wants[i].hist)
			}
		}
	}
}

// TestRunnerResultExpires checks a Runner's Result refuses to be read after
// the Runner's next Run, while a history built before stays intact.
func TestRunnerResultExpires(t *testing.T) {
	var rn Runner
	cfg := Config{Seed: 3, Profile: "lossy", Scenario: "small"}
	plan, err := Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	first := rn.Run(cfg, plan)
	h := first.History()
	before := historySum(h)
	second := rn.Run(Config{Seed: 4, Profile: "crashy", Scenario: "small"}, plan)
	if second.Err != nil {
		t.Fatal(second.Err)
	}
	second.Checksum()
	if historySum(h) != before {
		t.Error("a history built from a Runner's Result changed when the Runner ran again")
	}
	for name, read := range map[string]func(){
		"History": func() { first.History() }, "Trace": func() { first.Trace() }, "Checksum": func() { first.Checksum() },
	} {
		func() {
			defer func() {
				p := recover()
				if p == nil || !strings.Contains(p.(string), "next Run") {
					t.Errorf("%s of an expired Result: recovered %v, want the expiry panic", name, p)
				}
			}()
			read()
		}()
	}
}

// TestRunnerCapsLentMemory: memory a run grew past the lending bounds (a
// wrap=long seed's million events) is not lent to the next run, which
// starts on fresh room instead; memory within them is, and the run's
// result is the same either way.
func TestRunnerCapsLentMemory(t *testing.T) {
	cfg := goldenCases()[0]
	plan, err := Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := Run(cfg, plan).Checksum()
	for _, huge := range []bool{false, true} {
		rn := Runner{ReuseHistories: true}
		rn.Run(cfg, plan).History()
		n, tn := maxLentEvents, maxLentTape
		if huge {
			n, tn = n+1, tn+1
		}
		rn.mem.recs = make([]crec, 0, n)
		rn.mem.last.built = make([]model.Event, 0, n)
		rn.mem.tape = make([]byte, tn)
		recs, built, tape := &rn.mem.recs[:1][0], &rn.mem.last.built[:1][0], &rn.mem.tape[:1][0]
		if huge { // the runner lets go of the huge room before the run grows its own
			m := rn.mem
			if _, err := newWorld(cfg, &m); err != nil {
				t.Fatal(err)
			}
			if m.recs != nil || m.tape != nil || m.last != nil {
				t.Errorf("after lending, the runner still holds records %d, tape %d, last run %v", cap(m.recs), cap(m.tape), m.last != nil)
			}
		}
		r := rn.Run(cfg, plan)
		if got := r.Checksum(); got != want {
			t.Fatalf("huge=%v: checksum %x, want %x", huge, got, want)
		}
		h := r.History()
		lent := [3]bool{&rn.mem.recs[:1][0] == recs, &h.Events[:1][0] == built, &rn.mem.tape[:1][0] == tape}
		if lent != [3]bool{!huge, !huge, !huge} {
			t.Errorf("huge=%v: records, events, tape lent = %v, want all %v", huge, lent, !huge)
		}
	}
}
