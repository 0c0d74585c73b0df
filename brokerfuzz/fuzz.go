package brokerfuzz

import (
	"context"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"sort"
	"strings"
	"time"
)

// Config configures a fuzzing run.
type Config struct {
	// Seed selects the cases: case i of a run is a function of Seed, i and
	// the corpus the run grew; a finding's replay file needs neither.
	Seed uint64
	// Duration and Execs bound the run (the first reached ends it; zero:
	// no bound of that kind, but one of them must be set).
	Duration time.Duration
	Execs    int
	Timing   Timing
	// Reference, if set, is a second broker every case also runs against
	// (differential): each finding says whether the reference broke the
	// same rule on the same case.
	Reference *Target
	// Restart starts a managed target again after it crashed or hung (nil:
	// the run ends at the first crash or hang).
	Restart func() error
	// Usage samples the managed target's resident memory (bytes) and open
	// file descriptors (nil: the growth oracle is off).
	Usage func() (rss, fds int64, err error)
	// ShrinkBudget bounds the minimisation of each finding (default 60 s).
	ShrinkBudget time.Duration
	// StopAtFirst ends the run once a case tripped an oracle (its finding
	// shrunk): what a check that the fuzzer catches a known bug needs.
	StopAtFirst bool
	// Progress, if set, is called about every 2 s and at the end.
	Progress func(Progress)
}

// Progress is a running count, for a progress line.
type Progress struct {
	Execs, Corpus, Findings int
	Elapsed                 time.Duration
	Shrinking               string
}

// Report is the outcome of a run.
type Report struct {
	Target      string        `json:"target"`
	Reference   string        `json:"reference,omitempty"`
	Seed        uint64        `json:"seed"`
	Execs       int           `json:"execs"`
	Elapsed     time.Duration `json:"elapsed_ns"`
	Corpus      int           `json:"corpus"`
	Interrupted bool          `json:"interrupted"`
	Findings    []*Finding    `json:"findings"`
	// RefFindings are the reference broker's own violations, grouped.
	RefFindings []*Finding `json:"reference_findings,omitempty"`
	Usage       []string   `json:"usage,omitempty"`
}

// Finding groups the violations of one cause (Violation.Key).
type Finding struct {
	Key    string `json:"key"`
	Oracle string `json:"oracle"`
	Rule   string `json:"rule"`
	Cause  string `json:"cause,omitempty"`
	Packet string `json:"packet,omitempty"`
	Count  int    `json:"count"`
	// First is the first violation, on case FirstCase.
	First     Violation `json:"first"`
	FirstCase Case      `json:"-"`
	// Min is the shrunk case that still trips the same oracle and rule,
	// with its violation.
	Min          Case      `json:"-"`
	MinViolation Violation `json:"min_violation"`
	MinSteps     int       `json:"min_steps"`
	// Oracles, Packets and Causes count the violations by oracle, by the
	// type of the packet at stake and by the codec's rule (as numbered in
	// the connection's version).
	Oracles map[string]int `json:"oracles"`
	Packets map[string]int `json:"packets,omitempty"`
	Causes  map[string]int `json:"causes,omitempty"`
	// Reference says what the reference broker did with Min: "same" (it
	// broke the same rule), "kept" (it did not), "" (no reference).
	Reference string `json:"reference,omitempty"`
	// File is the replay file's path once written.
	File string `json:"file,omitempty"`
	// FoundAt is the number of the case that first tripped it (counted
	// from 1, of the run's cases) and FoundAfter the run's time then: what
	// it cost to find.
	FoundAt    int           `json:"found_at_case"`
	FoundAfter time.Duration `json:"found_after_ns"`
}

// Fuzz runs cases against t until the bounds or ctx end it.
func Fuzz(ctx context.Context, t Target, cfg Config) (*Report, error) {
	if cfg.Duration <= 0 && cfg.Execs <= 0 {
		return nil, fmt.Errorf("brokerfuzz: set a duration or a number of executions")
	}
	if cfg.ShrinkBudget <= 0 {
		cfg.ShrinkBudget = 60 * time.Second
	}
	f := &fuzzer{cfg: cfg, r: newRunner(t, cfg.Timing), rand: rand.New(rand.NewPCG(cfg.Seed, 0x636f72707573)),
		seen: map[uint64]bool{}, byKey: map[string]*Finding{}, refByKey: map[string]*Finding{}, start: time.Now()}
	if cfg.Reference != nil {
		f.ref = newRunner(*cfg.Reference, f.r.tm)
	}
	rep := &Report{Target: t.Name, Seed: cfg.Seed}
	if cfg.Reference != nil {
		rep.Reference = cfg.Reference.Name
	}
	err := f.loop(ctx, rep)
	rep.Execs, rep.Elapsed, rep.Corpus = f.execs, time.Since(f.start), len(f.corpus)
	rep.Interrupted = ctx.Err() != nil
	rep.Findings, rep.RefFindings = sorted(f.byKey), sorted(f.refByKey)
	f.progress("")
	return rep, err
}

// fuzzer is one run's state.
type fuzzer struct {
	cfg      Config
	r, ref   *runner
	rand     *rand.Rand
	corpus   []Case
	seen     map[uint64]bool
	byKey    map[string]*Finding
	refByKey map[string]*Finding
	execs    int
	start    time.Time
	lastProg time.Time
}

// corpusMax bounds the corpus of behaviourally new cases.
const corpusMax = 512

func (f *fuzzer) loop(ctx context.Context, rep *Report) error {
	var base [2]int64
	for ctx.Err() == nil && !f.done() {
		c := f.next()
		vs, sig, err := f.exec(f.r, c)
		if err != nil && len(vs) == 0 {
			return err
		}
		f.execs++
		if !f.seen[sig] {
			f.seen[sig] = true
			if len(f.corpus) < corpusMax {
				f.corpus = append(f.corpus, c)
			}
		}
		if err := f.record(ctx, f.byKey, f.r, c, vs); err != nil {
			return err
		}
		if f.ref != nil {
			if rvs, _, err := f.exec(f.ref, c); err == nil {
				_ = f.record(ctx, f.refByKey, f.ref, c, rvs)
			}
		}
		f.usage(rep, &base)
		f.progress("")
		if f.cfg.StopAtFirst && len(f.byKey) > 0 {
			break
		}
	}
	f.usageEnd(rep, base)
	return nil
}

// done reports whether a bound was reached.
func (f *fuzzer) done() bool {
	return f.cfg.Execs > 0 && f.execs >= f.cfg.Execs || f.cfg.Duration > 0 && time.Since(f.start) >= f.cfg.Duration
}

// next is the next case: a fresh one from the seed, or (half the time once
// the corpus has cases) a corpus case changed.
func (f *fuzzer) next() Case {
	if len(f.corpus) == 0 || f.rand.IntN(2) == 0 {
		return Generate(f.rand.Uint64())
	}
	return mutateCase(f.corpus[f.rand.IntN(len(f.corpus))], f.rand)
}

// exec runs c on r and judges it; a crash or hang restarts a managed
// broker. sig is the run's behaviour signature.
func (f *fuzzer) exec(r *runner, c Case) ([]Violation, uint64, error) {
	e := expectOf(c)
	obs, err := r.run(c, e)
	vs := judge(c, e, obs)
	if obs.crashed != "" || obs.hung != "" {
		if r == f.r && f.cfg.Restart != nil {
			if rerr := f.cfg.Restart(); rerr != nil {
				return vs, 0, fmt.Errorf("restart the broker after %s: %w", vs[0].Oracle, rerr)
			}
			return vs, signature(c, e, obs), nil
		}
		return vs, 0, fmt.Errorf("the broker %s", map[bool]string{true: "crashed", false: "hung"}[obs.crashed != ""])
	}
	if err != nil {
		return vs, 0, err
	}
	return vs, signature(c, e, obs), nil
}

// record counts vs into the findings; a new key is shrunk.
func (f *fuzzer) record(ctx context.Context, into map[string]*Finding, r *runner, c Case, vs []Violation) error {
	for _, v := range vs {
		k := v.Key()
		if fd := into[k]; fd != nil {
			fd.Count++
			fd.addCause(v, c)
			continue
		}
		fd := &Finding{Key: k, Oracle: v.Oracle, Rule: v.Rule, Cause: v.Cause, Packet: v.Packet, Count: 1, First: v, FirstCase: c, FoundAt: f.execs, FoundAfter: time.Since(f.start)}
		fd.addCause(v, c)
		into[k] = fd
		f.progress("shrinking " + k)
		fd.Min, fd.MinViolation = f.shrink(ctx, r, c, v)
		fd.MinSteps = len(fd.Min.Steps)
		if r == f.r && f.ref != nil {
			fd.Reference = "kept"
			if rvs, _, err := f.exec(f.ref, fd.Min); err == nil && hasKey(rvs, k) {
				fd.Reference = "same"
			}
		}
	}
	return nil
}

// addCause counts v by oracle, packet type and codec rule.
func (fd *Finding) addCause(v Violation, c Case) {
	if fd.Oracles == nil {
		fd.Oracles, fd.Packets, fd.Causes = map[string]int{}, map[string]int{}, map[string]int{}
	}
	fd.Oracles[v.Oracle]++
	if p := strings.TrimSpace(v.Packet); p != "" {
		fd.Packets[p]++
	}
	if v.Cause != "" {
		fd.Causes[v.Cause]++
	}
}

// signature hashes what the broker did with each step: the behaviour the
// corpus keeps one case of.
func signature(c Case, e *expect, obs *observation) uint64 {
	h := fnv.New64a()
	for i, st := range c.Steps {
		if !e.sent[i] || len(st.Data) == 0 {
			continue
		}
		fmt.Fprintf(h, "%d:%x;", st.Conn, st.Data[0]>>4)
	}
	conns := make([]int, 0, len(e.conns))
	for conn := range e.conns {
		conns = append(conns, conn)
	}
	sort.Ints(conns)
	for _, conn := range conns {
		ce := e.conns[conn]
		fmt.Fprintf(h, "|%s", ce.rule)
		if co := obs.conns[conn]; co != nil {
			co.mu.Lock()
			for _, p := range co.recv {
				fmt.Fprintf(h, ",%d/%x", p.typ, byte(p.reason))
			}
			fmt.Fprintf(h, "!%v", co.closed)
			co.mu.Unlock()
		}
	}
	return h.Sum64()
}

// hasKey reports whether vs has a violation of key k.
func hasKey(vs []Violation, k string) bool {
	for _, v := range vs {
		if v.Key() == k {
			return true
		}
	}
	return false
}

// sorted lists findings by oracle, then key.
func sorted(m map[string]*Finding) []*Finding {
	out := make([]*Finding, 0, len(m))
	for _, fd := range m {
		out = append(out, fd)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

// progress reports at most every 2 s (always when what is set).
func (f *fuzzer) progress(what string) {
	if f.cfg.Progress == nil || what == "" && time.Since(f.lastProg) < 2*time.Second {
		return
	}
	f.lastProg = time.Now()
	f.cfg.Progress(Progress{Execs: f.execs, Corpus: len(f.corpus), Findings: len(f.byKey), Elapsed: time.Since(f.start), Shrinking: what})
}

// mutateCase changes a corpus case: one step's bytes damaged, a step
// dropped, doubled or moved, or one step of a fresh case spliced in.
func mutateCase(c Case, r *rand.Rand) Case {
	steps := append([]Step(nil), c.Steps...)
	i := r.IntN(len(steps))
	switch r.IntN(5) {
	case 0:
		g := &gen{r: r}
		steps[i].Data, steps[i].Note = g.damage(steps[i].Data), steps[i].Note+" [bytes damaged]"
	case 1:
		if len(steps) > 1 {
			steps = append(steps[:i:i], steps[i+1:]...)
		}
	case 2:
		steps = append(steps[:i+1:i+1], steps[i:]...)
	case 3:
		j := r.IntN(len(steps))
		steps[i], steps[j] = steps[j], steps[i]
	default:
		fresh := Generate(r.Uint64())
		s := fresh.Steps[r.IntN(len(fresh.Steps))]
		s.Conn, s.Version = steps[i].Conn, steps[i].Version
		steps = append(steps[:i:i], append([]Step{s}, steps[i:]...)...)
	}
	return Case{Steps: steps}
}

// Replay runs one case against t and judges it (no restart, no shrink).
func Replay(t Target, c Case, tm Timing) ([]Violation, error) {
	r := newRunner(t, tm)
	e := expectOf(c)
	obs, err := r.run(c, e)
	return judge(c, e, obs), err
}

// String is the finding's one line.
func (fd *Finding) String() string {
	ref := ""
	if fd.Reference != "" {
		ref = ", reference: " + fd.Reference
	}
	return fmt.Sprintf("%s: %s; %s: %d times, shrunk to %d steps%s; first at case %d after %v", fd.Title(), counts(fd.Oracles), strings.Join(keys(fd.Packets), " "), fd.Count, fd.MinSteps, ref,
		fd.FoundAt, fd.FoundAfter.Round(100*time.Millisecond))
}

// Title names the finding: the rule a broker did not enforce, or the
// oracle and its rule.
func (fd *Finding) Title() string {
	if fd.Cause == "" {
		return fmt.Sprintf("%s [%s]", fd.Oracle, fd.Rule)
	}
	t := fd.Key
	for _, c := range keys(fd.Causes) {
		if c != strings.Trim(strings.TrimPrefix(fd.Key, "not enforced "), "[]") {
			t += " (3.1.1 [" + c + "])"
		}
	}
	return t
}

// Slug names the finding in a file name.
func (fd *Finding) Slug() string {
	var b strings.Builder
	for _, r := range strings.ToLower(fd.Key) {
		switch {
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '.':
			b.WriteRune(r)
		case r == ' ' || r == '-':
			if s := b.String(); s != "" && s[len(s)-1] != '-' {
				b.WriteByte('-')
			}
		}
	}
	return strings.Trim(b.String(), "-")
}

// keys returns m's keys, sorted.
func keys(m map[string]int) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// counts prints m as "k n, k n".
func counts(m map[string]int) string {
	var parts []string
	for _, k := range keys(m) {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}
