package live

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/mqttlab/mqttlab/findings"
	"github.com/mqttlab/mqttlab/model"
)

// Report is what a live test found.
type Report struct {
	Seed        uint64
	Config      TestConfig
	Wall        time.Duration
	Interrupted bool
	Schedule    []Fault
	Applied     map[FaultKind]int
	Stats       Stats
	Verdict     Verdict
	History     model.History
	// Findings are Verdict.Violations grouped by cause (package findings).
	Findings []findings.Finding
	// Samples is how many probes measured Config.Tolerance (jitterProbe).
	Samples int
}

// Stats are a run's message figures, from its history.
type Stats struct {
	Issued, Skipped int // handed to a publisher / not (publisher down or busy)
	Busy            int // of Skipped: the publisher was up but could not take it (paused, its previous process still running, or its command queue full)
	Accepted        int // QoS>=1 messages a publisher accepted (ours) or published with exit 0 (external)
	Deliveries      int // (subscriber, accepted message) pairs delivered
	Expected        int // accepted messages x subscribers
	Lost            int // messages some subscriber was owed (model NoLoss) and never got
	Duplicated      int // accepted messages some subscriber got more than once
	// Dropped counts the copies the broker said it dropped (Dropped
	// events); DropsExcused those of them no NoLoss violation names: the
	// drops the broker's declared limits allow, or of copies not owed.
	Dropped, DropsExcused int
	Events                int
}

// Excuse says why an invariant was not promised: the faults that took it
// away under the declared policy.
type Excuse struct {
	Invariant model.Invariant
	By        []string
}

// Verdict is the model's judgement of a history under a policy.
type Verdict struct {
	Faults     model.Faults
	Promised   model.Set
	Excused    []Excuse
	Violations []model.Violation // of promised invariants: the run fails
	Unpromised []model.Violation // of excused ones: information
}

// Judge checks h by the model under policies ps: the invariants ps
// promises under the faults h shows (each client by its own policy under
// its own faults, model.PromisesPer) must hold; the keep-alive rules allow
// tolerance, the recorder's timing uncertainty (model.Options.Slack).
func Judge(h model.History, ps model.Policies, tolerance time.Duration) Verdict {
	own := model.ClientFaults(h)
	slack := int64(tolerance)
	names := make([]string, 0, len(own))
	for n := range own {
		names = append(names, n)
	}
	noDedup := ps.NoDedup(names) // clients that may deliver a QoS 2 PUBLISH once per receipt
	faults, vs := model.CheckUnder(h, func(f model.Faults) model.Options {
		return model.Options{Only: model.PromisesPer(ps, f, own), Slack: slack, Limits: ps.Broker.Limits, NoDedup: noDedup}
	})
	v := Verdict{Faults: faults, Promised: model.PromisesPer(ps, faults, own), Violations: vs}
	for _, x := range model.Check(h, model.Options{Slack: slack, Limits: ps.Broker.Limits, NoDedup: noDedup}) {
		if !v.Promised.Has(x.Invariant) {
			v.Unpromised = append(v.Unpromised, x)
		}
	}
	v.Excused = excuses(ps, faults, own)
	return v
}

// faultGroup is a family of fault counters that excuses together.
type faultGroup struct {
	name  func(f model.Faults) string
	clear func(f *model.Faults)
}

var faultGroups = []faultGroup{
	{func(f model.Faults) string { return fmt.Sprintf("%d broker crashes", f.BrokerCrashes+f.BrokerStops) },
		func(f *model.Faults) {
			f.BrokerCrashes, f.BrokerStops = 0, 0
			f.Crashes = dropCrashes(f.Crashes, model.RoleBroker)
		}},
	{func(f model.Faults) string {
		return fmt.Sprintf("%d publisher crashes (%d holding unacked messages)", f.PublisherCrashes, f.PublisherCrashesUnacked)
	}, func(f *model.Faults) {
		f.PublisherCrashes, f.PublisherCrashesUnacked, f.PublisherRestarts = 0, 0, 0
		f.Crashes = dropCrashes(f.Crashes, model.RolePublisher)
	}},
	{func(f model.Faults) string {
		return fmt.Sprintf("%d subscriber crashes (%d mid-delivery, %d in the QoS 2 window)", f.SubscriberCrashes, f.SubscriberMidDelivery, f.QoS2WindowCrashes)
	}, func(f *model.Faults) {
		f.SubscriberCrashes, f.SubscriberMidDelivery, f.QoS2WindowCrashes, f.CallbackPreCrashes, f.CallbackPostCrashes = 0, 0, 0, 0, 0
		f.Crashes = dropCrashes(f.Crashes, model.RoleSubscriber)
	}},
	{func(f model.Faults) string {
		return fmt.Sprintf("%d lost connections (%d of publishers holding unacked messages)", f.ConnLosses, f.PublisherConnLosses)
	}, func(f *model.Faults) { f.ConnLosses, f.SubscriberConnLosses, f.PublisherConnLosses = 0, 0, 0 }},
	{func(f model.Faults) string { return fmt.Sprintf("%d partitions (black holes)", f.Partitions) },
		func(f *model.Faults) { f.Partitions = 0 }},
}

func dropCrashes(cs []model.CrashFault, r model.Role) []model.CrashFault {
	var out []model.CrashFault
	for _, c := range cs {
		if c.Role&r == 0 {
			out = append(out, c)
		}
	}
	return out
}

// excuses attributes every invariant ps does not promise under f (and
// the clients' own faults own) to the fault groups that alone (every other
// group's faults left out) take it away; when no single group does, to
// the faults together.
func excuses(ps model.Policies, f model.Faults, own map[string]model.Faults) []Excuse {
	promised := model.PromisesPer(ps, f, own)
	var out []Excuse
	for _, inv := range model.Invariants() {
		if promised.Has(inv) {
			continue
		}
		ex := Excuse{Invariant: inv}
		for gi := range faultGroups {
			alone, aloneOwn := onlyGroup(gi, f), map[string]model.Faults{}
			for n, of := range own {
				aloneOwn[n] = onlyGroup(gi, of)
			}
			if !model.PromisesPer(ps, alone, aloneOwn).Has(inv) {
				ex.By = append(ex.By, faultGroups[gi].name(f))
			}
		}
		if len(ex.By) == 0 {
			ex.By = []string{"the faults together"}
		}
		out = append(out, ex)
	}
	return out
}

// onlyGroup is f with the faults of every group but gi left out.
func onlyGroup(gi int, f model.Faults) model.Faults {
	alone := f
	alone.Crashes = append([]model.CrashFault(nil), f.Crashes...)
	for hi, h := range faultGroups {
		if hi != gi {
			h.clear(&alone)
		}
	}
	return alone
}

// report judges h and gathers the figures.
func (t *tester) report(h model.History, interrupted bool, wall time.Duration) *Report {
	t.mu.Lock()
	applied := map[FaultKind]int{}
	for k, v := range t.applied {
		applied[k] = v
	}
	issued, skipped, busy := t.issued, t.skipped, t.busy
	t.mu.Unlock()
	cfg := t.cfg
	cfg.Tolerance = t.tolerance
	r := JudgeRecorded(cfg, h)
	r.Wall, r.Interrupted, r.Schedule, r.Applied, r.Samples = wall, interrupted, t.schedule, applied, t.samples
	r.Stats.Issued, r.Stats.Skipped, r.Stats.Busy = issued, skipped, busy
	return r
}

// JudgeRecorded judges a recorded history h under cfg's promises and
// groups its violations into findings: the report of a run without its
// schedule and workload figures (RunTest fills them in). It says on
// cfg.Log what it is doing and how long each part took, so a huge history
// is never a silent wait.
func JudgeRecorded(cfg TestConfig, h model.History) *Report {
	p := startProgress(cfg.Log)
	p.say("judging %d events", len(h.Events))
	st := Stats{Events: len(h.Events)}
	statsOf(h, &st)
	v := Judge(h, cfg.Promise, cfg.Tolerance)
	st.Lost = lostMessages(v)
	st.DropsExcused = st.Dropped - droppedLost(h, v)
	p.say("judged: %d violations of promised invariants; grouping them into findings", len(v.Violations))
	fs := findings.Group(&h, v.Violations)
	p.say("%d findings", len(fs))
	return &Report{Seed: cfg.Seed, Config: cfg, Stats: st, Verdict: v, History: h, Findings: fs}
}

// statsOf counts accepted, delivered, lost and duplicated messages.
func statsOf(h model.History, st *Stats) {
	subs := map[string]bool{}
	got := map[string]int{}
	var accepted []string
	for _, e := range h.Events {
		switch {
		case e.Kind == model.Subscribed:
			subs[e.Node] = true
		case e.Kind == model.Delivered:
			got[e.Node+"\x00"+e.Msg]++
		case e.Kind == model.Accepted && e.QoS >= 1:
			accepted = append(accepted, e.Msg)
		case e.Kind == model.Dropped:
			st.Dropped++
		}
	}
	st.Accepted = len(accepted)
	st.Expected = len(accepted) * len(subs)
	for _, m := range accepted {
		dup := false
		for s := range subs {
			n := got[s+"\x00"+m]
			if n > 0 {
				st.Deliveries++
			}
			dup = dup || n > 1
		}
		if dup {
			st.Duplicated++
		}
	}
}

// lostMessages counts the distinct messages of the NoLoss violations,
// promised or not: messages a subscriber was owed by the model's rules and
// never got (a delivery a clean start discarded is not owed).
func lostMessages(v Verdict) int {
	lost := map[string]bool{}
	for _, vs := range [][]model.Violation{v.Violations, v.Unpromised} {
		for _, x := range vs {
			if x.Invariant == model.NoLoss {
				for _, m := range msgRE.FindAllString(x.Reason, 1) {
					lost[m] = true
				}
			}
		}
	}
	return len(lost)
}

// droppedLost counts the broker's Dropped events whose copy a NoLoss
// violation (promised or not) names as lost.
func droppedLost(h model.History, v Verdict) int {
	lost := map[string]bool{}
	for _, vs := range [][]model.Violation{v.Violations, v.Unpromised} {
		for _, x := range vs {
			if x.Invariant == model.NoLoss {
				for _, m := range msgRE.FindAllString(x.Reason, 1) {
					lost[x.Node+"\x00"+m] = true
				}
			}
		}
	}
	n := 0
	for _, e := range h.Events {
		if k := e.Peer + "\x00" + e.Msg; e.Kind == model.Dropped && lost[k] {
			n++
			delete(lost, k) // once per copy
		}
	}
	return n
}

// Failed reports whether the run violated a promised invariant.
func (r *Report) Failed() bool { return len(r.Verdict.Violations) > 0 }

// Summary is the report in the simulator's style.
func (r *Report) Summary() string {
	var b strings.Builder
	c := r.Config
	fmt.Fprintf(&b, "== live run: seed %d ==\n", r.Seed)
	fmt.Fprintf(&b, "broker       %s\n", c.Broker.Name)
	fmt.Fprintf(&b, "subscribers  %d x %s\n", c.Subscribers, subjectName(c.Subscriber, c.SubscriberAdapter))
	fmt.Fprintf(&b, "publishers   %d x %s\n", c.Publishers, subjectName(c.Publisher, c.PublisherAdapter))
	fmt.Fprintf(&b, "workload     QoS %d on %s, %d msg/s, fault phase %v, liveness bound %v (wall %v)\n", c.QoS, c.Topic, c.Rate, c.Duration, c.Liveness, r.Wall.Round(time.Millisecond))
	if cut := r.cutoff(); cut != "" {
		fmt.Fprintf(&b, "liveness     CUT, unfinished: %s\n", cut)
	}
	fmt.Fprintf(&b, "faults       %d scheduled (%s), applied: %s\n", len(r.Schedule), kindList(c.Faults), appliedList(r.Applied))
	s := r.Stats
	fmt.Fprintf(&b, "messages     issued %d (skipped %d), accepted %d, delivered %d/%d pairs, lost %d, duplicated %d\n",
		s.Issued, s.Skipped, s.Accepted, s.Deliveries, s.Expected, s.Lost, s.Duplicated)
	if s.Skipped > 0 {
		fmt.Fprintf(&b, "skipped      %d while their publisher was killed, %d while it was up but busy (paused, its previous process still running, or its command queue full)\n", s.Skipped-s.Busy, s.Busy)
	}
	if s.Dropped > 0 {
		fmt.Fprintf(&b, "drops        %d copies the broker dropped (its drop log), %d excused by its declared limits or not owed\n", s.Dropped, s.DropsExcused)
	}
	fmt.Fprintf(&b, "events       %d\n", s.Events)
	v := r.Verdict
	for _, role := range c.PromiseRoles {
		fmt.Fprintf(&b, "promise      %s\n", role)
	}
	fmt.Fprintf(&b, "promised     %s\n", v.Promised)
	fmt.Fprintf(&b, "timing       keep-alive tolerance %v: the latest a timer of the tester woke (%d probes of %v), the proxy's timing uncertainty\n", c.Tolerance, r.Samples, jitterTick)
	for _, e := range v.Excused {
		fmt.Fprintf(&b, "excused      %s: by %s\n", e.Invariant, strings.Join(e.By, "; "))
	}
	r.findingsSummary(&b)
	fmt.Fprintf(&b, "violations   %s%s\n", countList(v.Violations), r.firstAt())
	if n := len(v.Unpromised); n > 0 {
		fmt.Fprintf(&b, "unpromised   %d violations of excused invariants (see violations.txt)\n", n)
	}
	verdict := "OK: no promised invariant violated"
	switch {
	case r.Interrupted:
		verdict = "INTERRUPTED: judged what was recorded (no liveness phase)"
	case r.Failed():
		verdict = "FAIL: promised invariants violated"
	}
	fmt.Fprintf(&b, "verdict      %s\n", verdict)
	return b.String()
}

// cutoff is the reason of the run's Cutoff event ("" when the liveness
// phase ended otherwise).
func (r *Report) cutoff() string {
	for i := len(r.History.Events) - 1; i >= 0; i-- {
		if e := &r.History.Events[i]; e.Kind == model.Cutoff {
			return e.Reason
		}
	}
	return ""
}

// FirstViolation is how far into the run (wall time from its first event)
// the event of the earliest promised violation happened; false without one.
func (r *Report) FirstViolation() (time.Duration, bool) {
	evs := r.History.Events
	if len(r.Verdict.Violations) == 0 || len(evs) == 0 {
		return 0, false
	}
	first := r.Verdict.Violations[0].Step // sorted by step
	if first >= len(evs) {
		return 0, false
	}
	return time.Duration(evs[first].Time - evs[0].Time), true
}

func (r *Report) firstAt() string {
	if d, ok := r.FirstViolation(); ok {
		return fmt.Sprintf(" (the first at %.1fs into the run)", d.Seconds())
	}
	return ""
}

// countList counts violations per invariant ("none" when empty).
func countList(vs []model.Violation) string {
	if len(vs) == 0 {
		return "none"
	}
	n := map[model.Invariant]int{}
	for _, v := range vs {
		n[v.Invariant]++
	}
	var parts []string
	for _, inv := range model.Invariants() {
		if n[inv] > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", inv, n[inv]))
		}
	}
	return strings.Join(parts, ", ")
}

// subjectName describes a role's clients: an adapter, a template, or ours.
func subjectName(tmpl string, a *Adapter) string {
	if a != nil {
		return "adapter " + a.Name + " (long-running, " + a.Dir + ")"
	}
	if tmpl == "" {
		return "ours (engine client, file store)"
	}
	return tmpl
}

func appliedList(m map[FaultKind]int) string {
	var parts []string
	for _, k := range FaultKinds() {
		if m[k] > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// Write saves the run directory: summary.txt, violations.txt,
// findings.md, findings.json, history.jsonl and schedule.txt (logs/ and
// data/ were written as the run went).
func (r *Report) Write(dir string) error {
	p := startProgress(r.Config.Log)
	p.say("writing the run directory %s", dir)
	err := r.write(dir)
	p.say("run directory written")
	return err
}

func (r *Report) write(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	files := map[string]string{
		"summary.txt":    r.Summary(),
		"violations.txt": r.violationsText(),
		"schedule.txt":   r.scheduleText(),
	}
	if err := r.writeFindings(dir); err != nil {
		return err
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(files[n]), 0o644); err != nil {
			return err
		}
	}
	return writeHistory(filepath.Join(dir, "history.jsonl"), r.History)
}

func (r *Report) scheduleText() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# fault schedule of seed %d (kinds %s, phase %v, mean gap %v)\n", r.Seed, kindList(r.Config.Faults), r.Config.Duration, r.Config.FaultInterval)
	for _, f := range r.Schedule {
		b.WriteString(f.String() + "\n")
	}
	return b.String()
}

// msgRE finds message ids quoted in a violation's reason.
var msgRE = regexp.MustCompile(`lt[0-9a-f]{6}-[0-9]+`)

// violationsText lists every violation with the history excerpt behind it:
// the events around its step and every event of the messages it names.
func (r *Report) violationsText() string {
	var b strings.Builder
	x := newExcerptIndex(&r.History)
	for _, group := range []struct {
		title string
		vs    []model.Violation
	}{{"promised", r.Verdict.Violations}, {"not promised (information)", r.Verdict.Unpromised}} {
		for _, v := range group.vs {
			fmt.Fprintf(&b, "== %s (%s) at step %d, node %s\n%s\n", v.Invariant, group.title, v.Step, v.Node, v.Reason)
			for _, i := range x.excerpt(v) {
				b.WriteString(FormatEvent(i, &r.History.Events[i]) + "\n")
			}
			b.WriteString("\n")
		}
	}
	if b.Len() == 0 {
		return "no violations\n"
	}
	return b.String()
}

// excerptIndex indexes a history once for every violation's excerpt: the
// events of each message, and the landmarks.
type excerptIndex struct {
	h         *model.History
	byMsg     map[string][]int
	landmarks []int
}

func newExcerptIndex(h *model.History) *excerptIndex {
	x := &excerptIndex{h: h, byMsg: map[string][]int{}}
	for i := range h.Events {
		e := &h.Events[i]
		if e.Msg != "" {
			x.byMsg[e.Msg] = append(x.byMsg[e.Msg], i)
		}
		if m := e.Packet.Msg; m != "" && m != e.Msg {
			x.byMsg[m] = append(x.byMsg[m], i)
		}
		if landmark(e) {
			x.landmarks = append(x.landmarks, i)
		}
	}
	return x
}

// excerpt is the history behind violation v: the events it cites, those
// around its step, every event of the messages its reason names, and the
// landmarks between the first and the last of these.
func (x *excerptIndex) excerpt(v model.Violation) []int {
	set := map[int]bool{}
	for i := max(0, v.Step-3); i <= v.Step+1 && i < len(x.h.Events); i++ {
		set[i] = true
	}
	for _, i := range v.Events {
		if i >= 0 && i < len(x.h.Events) {
			set[i] = true
		}
	}
	for _, m := range msgRE.FindAllString(v.Reason, -1) {
		for _, i := range x.byMsg[m] {
			set[i] = true
		}
	}
	lo, hi := len(x.h.Events), -1
	for i := range set {
		lo, hi = min(lo, i), max(hi, i)
	}
	for j := sort.SearchInts(x.landmarks, lo); j < len(x.landmarks) && x.landmarks[j] <= hi; j++ {
		set[x.landmarks[j]] = true
	}
	out := make([]int, 0, len(set))
	for i := range set {
		out = append(out, i)
	}
	sort.Ints(out)
	return out
}

// landmark reports the events every excerpt shows: crashes, restarts,
// partitions and the phase markers.
func landmark(e *model.Event) bool {
	switch e.Kind {
	case model.Crash, model.Restart, model.Partition, model.Heal, model.LivenessStart, model.Quiescent, model.Stuck, model.Cutoff, model.Failed:
		return true
	}
	return false
}
