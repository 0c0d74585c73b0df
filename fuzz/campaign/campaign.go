package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"
)

// campaign is one running campaign: the scheduler, the turns in progress,
// and what every turn found.
type campaign struct {
	cfg         config
	out         io.Writer
	sched       *scheduler
	targets     []target
	byLabel     map[string]target
	ceiling     int64 // execs/s per turn of the empty target; 0: not measured
	maxTurns    int   // turns to start in all; 0: no limit
	oneEach     bool  // an equal share: one turn of cfg.slice per target, whatever the deadline
	started     int   // turns started so far
	start       time.Time
	deadline    time.Time
	turns       map[int]*turn
	nextID      int
	msgs        chan turnMsg
	stats       map[string]*targetStats
	found       []crasher
	failures    []string
	interrupted bool
}

// turn is one go test -fuzz process.
type turn struct {
	id      int
	target  target
	length  time.Duration
	pgid    int
	outcome turnOutcome
}

// turnMsg is one output line of a turn, or its end.
type turnMsg struct {
	id   int
	line string
	done bool
	err  error
}

// targetStats sums a target's turns.
type targetStats struct {
	turns   int
	seconds int64 // fuzzing seconds as Go reported them
	execs   int64
	newCov  int64
	last    int64 // last reported execs/s
}

// avg is the target's executions per second of fuzzing over all its turns.
func (s *targetStats) avg() int64 {
	if s.seconds == 0 {
		return 0
	}
	return s.execs / s.seconds
}

// crasher is an input that makes a target fail.
type crasher struct {
	entry  string // FuzzX/HASH
	file   string // where the corpus file is
	known  bool   // it was already in the corpus (a replay failed)
	target target
}

// newCampaign prepares a campaign over targets.
func newCampaign(cfg config, targets []target, out io.Writer) *campaign {
	c := &campaign{cfg: cfg, out: out, sched: newScheduler(labels(targets)), targets: targets, byLabel: make(map[string]target),
		turns: make(map[int]*turn), msgs: make(chan turnMsg, 64), stats: make(map[string]*targetStats)}
	for _, t := range targets {
		c.byLabel[t.label] = t
		c.stats[t.label] = &targetStats{}
	}
	return c
}

// run runs turns until the deadline, until every target is retired, or
// until interrupted, then prints the summary and returns the exit status.
func (c *campaign) run(interrupts <-chan os.Signal) int {
	c.start = time.Now()
	c.deadline = c.start.Add(c.cfg.duration)
	fmt.Fprintf(c.out, "campaign: %s for %v, turns of %v, %d at once: %s\n", strings.Join(c.cfg.pkgs, " "), c.cfg.duration, c.cfg.slice, c.cfg.parallel, strings.Join(labels(c.targets), " "))
	if c.oneEach {
		fmt.Fprintf(c.out, "campaign: %v is short of a full turn per target: each of the %d targets gets one turn of %v (each turn's build adds wall time)\n", c.cfg.duration, len(c.targets), c.cfg.slice)
	}
	c.fill()
	tick := time.NewTicker(c.cfg.progress)
	defer tick.Stop()
	for len(c.turns) > 0 {
		select {
		case m := <-c.msgs:
			c.handle(m)
			if !c.interrupted {
				c.fill()
			}
		case <-tick.C:
			c.printProgress()
		case <-interrupts:
			c.interrupt()
		}
	}
	c.summary()
	switch {
	case len(c.found) > 0 || len(c.failures) > 0:
		return exitFound
	case c.interrupted:
		return exitInterrupted
	}
	return exitOK
}

// fill starts turns while slots, time and targets are left.
func (c *campaign) fill() {
	for len(c.turns) < c.cfg.parallel && (c.maxTurns == 0 || c.started < c.maxTurns) {
		d := turnLength(c.cfg.slice, time.Until(c.deadline))
		if c.oneEach {
			d = c.cfg.slice
		}
		label, ok := c.sched.next()
		if d == 0 || !ok {
			return
		}
		if err := c.startTurn(c.byLabel[label], d); err != nil {
			c.failures = append(c.failures, fmt.Sprintf("%s: cannot start go test: %v", label, err))
			c.sched.start(label, 0)
			c.sched.finish(label, true)
		}
	}
}

// startTurn starts one go test -fuzz process and the goroutine that reads
// its output.
func (c *campaign) startTurn(target target, d time.Duration) error {
	cmd := turnCommand(c.cfg, target, d)
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Start(); err != nil {
		r.Close()
		w.Close()
		return err
	}
	w.Close()
	c.nextID++
	c.started++
	t := &turn{id: c.nextID, target: target, length: d, pgid: cmd.Process.Pid}
	c.turns[t.id] = t
	c.sched.start(target.label, d)
	fmt.Fprintf(c.out, "%s start %s for %v\n", c.clock(), target.label, d)
	go func() {
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 64*1024), 1<<20)
		for sc.Scan() {
			c.msgs <- turnMsg{id: t.id, line: sc.Text()}
		}
		r.Close()
		c.msgs <- turnMsg{id: t.id, done: true, err: cmd.Wait()}
	}()
	return nil
}

// handle folds one message into its turn.
func (c *campaign) handle(m turnMsg) {
	t := c.turns[m.id]
	if !m.done {
		l := t.outcome.add(m.line)
		if l.kind == lineCrasher || l.kind == lineSeedFail {
			c.record(t.target, l)
		}
		return
	}
	delete(c.turns, m.id)
	o := &t.outcome
	s := c.stats[t.target.label]
	s.turns++
	s.seconds += o.elapsed
	s.execs += o.execs
	s.newCov += o.newCov
	if o.rate > 0 {
		s.last = o.rate
	}
	broken := m.err != nil && len(o.crashers) == 0 && o.seedFail == "" && !c.interrupted && !o.deadlineOnly()
	if broken {
		c.failures = append(c.failures, fmt.Sprintf("%s: go test failed (%v) without a crasher; last output:\n    %s",
			t.target.label, m.err, strings.Join(o.tail, "\n    ")))
	}
	retire := len(o.crashers) > 0 || o.seedFail != "" || broken
	c.sched.finish(t.target.label, retire)
	fmt.Fprintf(c.out, "%s end %s: %s\n", c.clock(), t.target.label, turnSummary(o, m.err))
}

// record lists a crasher a turn of t reported; two turns of one target may
// find the same input, so it is listed once.
func (c *campaign) record(t target, l fuzzLine) {
	file := corpusFile(t, l.entry)
	if c.known(file) {
		return
	}
	c.found = append(c.found, crasher{entry: l.entry, file: file, known: l.kind == lineSeedFail, target: t})
	fmt.Fprintf(c.out, "%s CRASHER %s: %s\n    reproduce: %s\n", c.clock(), t.label, file, reproduce(t.pkg, l.entry))
}

// known reports whether a crasher file was already recorded.
func (c *campaign) known(file string) bool {
	return slices.ContainsFunc(c.found, func(f crasher) bool { return f.file == file })
}

// turnSummary describes how a turn ended.
func turnSummary(o *turnOutcome, err error) string {
	switch {
	case len(o.crashers) > 0:
		return fmt.Sprintf("%d crasher(s) after %d execs", len(o.crashers), o.execs)
	case o.seedFail != "":
		return "corpus entry " + o.seedFail + " fails"
	case err != nil && !o.passed:
		return fmt.Sprintf("failed: %v", err)
	}
	return fmt.Sprintf("ok, %d execs in %ds, %d new interesting", o.execs, o.elapsed, o.newCov)
}

// interrupt forwards the first Ctrl-C to every turn's process group, so
// the fuzzers stop cleanly; a second one kills them.
func (c *campaign) interrupt() {
	sig := syscall.SIGINT
	if c.interrupted {
		sig = syscall.SIGKILL
		fmt.Fprintf(c.out, "%s killing %d turn(s)\n", c.clock(), len(c.turns))
	} else {
		fmt.Fprintf(c.out, "%s interrupted: stopping %d turn(s) (Ctrl-C again to kill)\n", c.clock(), len(c.turns))
	}
	c.interrupted = true
	for _, id := range c.turnIDs() {
		_ = syscall.Kill(-c.turns[id].pgid, sig)
	}
}

// turnIDs lists the running turns in start order.
func (c *campaign) turnIDs() []int {
	ids := make([]int, 0, len(c.turns))
	for id := range c.turns {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// printProgress prints one line per running turn.
func (c *campaign) printProgress() {
	for _, id := range c.turnIDs() {
		t := c.turns[id]
		o := &t.outcome
		fmt.Fprintf(c.out, "%s %s: %d execs/s, %d execs, %d new interesting, %d crasher(s) found so far\n",
			c.clock(), t.target.label, o.rate, o.execs, o.newCov, len(c.found))
	}
}

// clock is the campaign's elapsed time over its duration.
func (c *campaign) clock() string {
	return fmt.Sprintf("[%v/%v]", time.Since(c.start).Truncate(time.Second), c.cfg.duration)
}

// corpusFile is the path of a corpus entry "FuzzX/HASH" of t's package.
func corpusFile(t target, entry string) string {
	return filepath.Join(t.dir, "testdata", "fuzz", filepath.FromSlash(entry))
}

// summary prints the per-target table, the crashers with their commands,
// and the failures.
func (c *campaign) summary() {
	fmt.Fprintf(c.out, "\ncampaign summary after %v%s:\n", time.Since(c.start).Truncate(time.Second), map[bool]string{true: " (interrupted)"}[c.interrupted])
	if c.ceiling > 0 {
		fmt.Fprintf(c.out, "ceiling: %d execs/s per turn (an empty target, %d turn(s) at once, one worker each)\n", c.ceiling, c.cfg.parallel)
	}
	tw := tabwriter.NewWriter(c.out, 2, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "target\tturns\tfuzz s\texecs\tavg execs/s\tlast execs/s\tnew interesting\t")
	if c.ceiling > 0 {
		fmt.Fprint(tw, "of ceiling\t")
	}
	fmt.Fprintln(tw)
	for _, t := range c.targets {
		s := c.stats[t.label]
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t", t.label, s.turns, s.seconds, s.execs, s.avg(), s.last, s.newCov)
		if c.ceiling > 0 {
			fmt.Fprintf(tw, "%d%%\t", s.avg()*100/c.ceiling)
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	if len(c.found) == 0 {
		fmt.Fprintln(c.out, "no crashers")
	}
	for _, f := range c.found {
		what := "new crasher, minimized and saved"
		if f.known {
			what = "corpus entry that still fails"
		}
		fmt.Fprintf(c.out, "CRASHER %s (%s): %s\n    reproduce: %s\n", f.entry, what, f.file, reproduce(f.target.pkg, f.entry))
	}
	for _, f := range c.failures {
		fmt.Fprintln(c.out, "FAILED", f)
	}
}
