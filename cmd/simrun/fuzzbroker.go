package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/mqttlab/mqttlab/brokerfuzz"
	"github.com/mqttlab/mqttlab/live"
)

// fuzzBrokerDoc is simrun fuzz-broker's help text.
const fuzzBrokerDoc = `Fuzz an MQTT broker over the wire. It starts the broker under test from the
same templates as 'simrun live' (-broker ours, mosquitto, a command with {port}
and {dir}, or -broker-addr for one it does not manage), then sends it cases:
one to three connections of valid sessions with one packet mutated (a field
set to a value a rule forbids, or bytes flipped, cut or grown). The strict
codec (engine/packet) is the oracle of what each packet is; the broker is
judged by these oracles:

  crash           the broker's process ended
  hang            a fresh connection's CONNECT and PINGREQ got no answer
  left-open       a malformed packet or protocol error did not close its connection
  answered        the broker acknowledged a packet it must refuse
  forwarded       a refused packet's payload reached a subscriber on another connection
  success-reason  a v5 broker refused with a reason code below 0x80
  unanswered      a valid request got no answer on a connection the broker kept open
  growth          memory or descriptors grew over cases that keep nothing

Each new finding is shrunk (steps removed while the same oracle and rule
still trip) and saved as a replay file in OUT/replays/; 'simrun fuzz-broker
-replay FILE' runs it against any broker. OUT/report.md reads the findings;
OUT/findings.json has them for tools. With -reference a second broker runs
every case too (differential): each finding says whether the reference broke
the same rule, and the reference's own findings are listed apart.`

// fuzzBrokerFlags are simrun fuzz-broker's flags.
type fuzzBrokerFlags struct {
	target, ref  liveFlags
	canary       string
	seed         uint64
	duration     time.Duration
	execs        int
	shrink       time.Duration
	closeTimeout time.Duration
	out, replay  string
	force, first bool
}

// cmdFuzzBroker is simrun fuzz-broker.
func (e *env) cmdFuzzBroker(args []string) int {
	var f fuzzBrokerFlags
	fs := e.newFlagSet("fuzz-broker", "[flags] | -replay FILE [flags]", fuzzBrokerDoc)
	fs.StringVar(&f.target.broker, "broker", "ours", "broker under test: ours, mosquitto, or a command template with {port} {dir}")
	fs.StringVar(&f.target.brokerPreset, "broker-preset", defaultPreset, "engine preset of -broker ours")
	fs.StringVar(&f.target.brokerConfig, "broker-config", "", "config file template written to {dir} before each start (as simrun live)")
	fs.StringVar(&f.target.brokerAddr, "broker-addr", "", "HOST:PORT of a broker the fuzzer does not manage (no crash detection but by the probe)")
	fs.StringVar(&f.canary, "canary", "", "-broker ours with a deliberate bug ("+strings.Join(canaryNames(), ", ")+"), to see the fuzzer catch it")
	fs.StringVar(&f.ref.broker, "reference", "", "a second broker run side by side (ours, mosquitto or a template): differential")
	fs.StringVar(&f.ref.brokerConfig, "reference-config", "", "config file template of -reference")
	fs.Uint64Var(&f.seed, "seed", 1, "seed of the cases")
	fs.DurationVar(&f.duration, "duration", time.Minute, "how long to fuzz (0: until -execs)")
	fs.IntVar(&f.execs, "execs", 0, "how many cases to run (0: until -duration)")
	fs.DurationVar(&f.shrink, "shrink", time.Minute, "time to shrink each new finding (0: keep the first case)")
	fs.DurationVar(&f.closeTimeout, "close-timeout", brokerfuzz.DefaultTiming.Close, "how long a refused packet's connection may stay open")
	fs.StringVar(&f.out, "out", "", "run directory (default fuzz-runs/BROKER-seed-N)")
	fs.BoolVar(&f.force, "force", false, "reuse -out even if it holds another run")
	fs.BoolVar(&f.first, "first", false, "stop at the first finding, once shrunk (growth is judged at the end of the run only)")
	fs.StringVar(&f.replay, "replay", "", "run one saved case file against the broker and judge it")
	pos, err := fs.parse(args)
	if err != nil {
		return e.fail("fuzz-broker", err)
	}
	if len(pos) > 0 {
		return e.fail("fuzz-broker", badUsage("fuzz-broker", "unexpected argument %q", pos[0]))
	}
	f.ref.brokerPreset = defaultPreset
	if err := f.validate(); err != nil {
		return e.fail("fuzz-broker", err)
	}
	if f.replay != "" {
		return e.fuzzReplay(f)
	}
	return e.fuzzRun(f)
}

// validate checks the flags up front.
func (f *fuzzBrokerFlags) validate() error {
	bad := func(format string, args ...any) error { return badUsage("fuzz-broker", format, args...) }
	switch {
	case f.duration < 0 || f.execs < 0 || f.shrink < 0 || f.closeTimeout < 0:
		return bad("-duration, -execs, -shrink and -close-timeout must not be negative")
	case f.duration == 0 && f.execs == 0 && f.replay == "":
		return bad("set -duration or -execs")
	case f.canary != "" && (f.target.broker != "ours" || f.target.brokerAddr != ""):
		return bad("-canary needs -broker ours")
	}
	if _, ok := live.Canaries[f.canary]; f.canary != "" && !ok {
		return bad("bad -canary %q: known: %s", f.canary, strings.Join(canaryNames(), ", "))
	}
	return nil
}

// fuzzTarget is a started broker: its target and how to stop it.
type fuzzTarget struct {
	t    brokerfuzz.Target
	proc *live.Process
	stop func()
	// restart is nil for an unmanaged broker.
	restart func() error
}

// startFuzzTarget starts (or reaches) the broker of lf in dir/NAME.
func (e *env) startFuzzTarget(lf *liveFlags, canary, dir, name string) (*fuzzTarget, error) {
	bs, err := lf.brokerSubject()
	if err != nil {
		return nil, err
	}
	if bs.Addr != "" {
		return &fuzzTarget{t: brokerfuzz.Target{Name: bs.Name, Addr: bs.Addr}, stop: func() {}}, nil
	}
	if canary != "" {
		bs.Command += " -canary " + canary
		bs.Name += ", canary " + canary
	}
	data := filepath.Join(dir, "data", name)
	if err := os.MkdirAll(data, 0o755); err != nil {
		return nil, ioFailure(err, "create %s", data)
	}
	if err := os.MkdirAll(filepath.Join(dir, "logs"), 0o755); err != nil {
		return nil, ioFailure(err, "create logs")
	}
	logf, err := os.OpenFile(filepath.Join(dir, "logs", name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, ioFailure(err, "open the %s log", name)
	}
	port, err := live.FreePort()
	if err != nil {
		return nil, err
	}
	ft := &fuzzTarget{t: brokerfuzz.Target{Name: bs.Name, Addr: "127.0.0.1:" + strconv.Itoa(port)}}
	start := func() error {
		p, err := startBrokerProc(bs, port, data, logf)
		ft.proc = p
		return err
	}
	ft.t.Exited = func() (bool, string) {
		if p := ft.proc; p != nil && p.Exited() {
			return true, fmt.Sprintf("exit status %d; its last output: %s", p.ExitCode(), lastLines(p.Stderr(), 5))
		}
		return false, ""
	}
	ft.restart = func() error {
		if ft.proc != nil {
			_ = ft.proc.Kill()
		}
		return start()
	}
	ft.stop = func() {
		if ft.proc != nil {
			_ = ft.proc.Terminate(live.KillWait)
		}
		logf.Close()
	}
	if err := start(); err != nil {
		ft.stop()
		return nil, fmt.Errorf("%s did not start: %w", name, err)
	}
	return ft, nil
}

// startBrokerProc writes a broker's config and starts it, waiting for its
// port.
func startBrokerProc(bs live.BrokerSubject, port int, dir string, logf *os.File) (*live.Process, error) {
	vars := map[string]string{"port": strconv.Itoa(port), "dir": dir}
	if bs.Config != "" {
		conf, err := live.ExpandText(bs.Config, vars)
		if err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(dir, bs.ConfigName), []byte(conf), 0o644); err != nil {
			return nil, err
		}
	}
	cmd, err := live.Expand(bs.Command, vars)
	if err != nil {
		return nil, err
	}
	p, err := live.StartProcess(live.ProcOptions{Name: "broker", Command: cmd, Env: bs.Env, Log: logf})
	if err != nil {
		return nil, err
	}
	if err := p.WaitPort("127.0.0.1:"+strconv.Itoa(port), 10*time.Second); err != nil {
		_ = p.Kill()
		return nil, fmt.Errorf("%w; its last output: %s", err, lastLines(p.Stderr(), 5))
	}
	return p, nil
}

// lastLines is the last n lines of s, on one line.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	if len(lines) == 1 && lines[0] == "" {
		return "(none)"
	}
	return strings.Join(lines, " | ")
}

// fuzzRun is a fuzzing run.
func (e *env) fuzzRun(f fuzzBrokerFlags) int {
	dir := f.out
	if dir == "" {
		dir = filepath.Join("fuzz-runs", fmt.Sprintf("%s-seed-%d", dirWord(f.target.broker, f.target.brokerAddr), f.seed))
	}
	if err := claimFuzzDir(dir, f.force); err != nil {
		return e.fail("fuzz-broker", err)
	}
	tgt, err := e.startFuzzTarget(&f.target, f.canary, dir, "broker")
	if err != nil {
		return e.fail("fuzz-broker", err)
	}
	defer tgt.stop()
	cfg := brokerfuzz.Config{Seed: f.seed, Duration: f.duration, Execs: f.execs, ShrinkBudget: f.shrink,
		Timing: brokerfuzz.Timing{Close: f.closeTimeout}, Restart: tgt.restart, Progress: e.fuzzProgress, StopAtFirst: f.first}
	if f.shrink == 0 {
		cfg.ShrinkBudget = time.Nanosecond
	}
	if tgt.restart != nil {
		cfg.Usage = func() (int64, int64, error) { return brokerfuzz.ProcUsage(tgt.proc.Pid()) }
	}
	if f.ref.broker != "" {
		ref, err := e.startFuzzTarget(&f.ref, "", dir, "reference")
		if err != nil {
			return e.fail("fuzz-broker", err)
		}
		defer ref.stop()
		cfg.Reference = &ref.t
	}
	fmt.Fprintf(e.stdout, "fuzz-broker: %s, seed %d, run directory %s\n", tgt.t.Name, f.seed, absPath(dir))
	e.catchSignals()
	rep, ferr := brokerfuzz.Fuzz(e.ctx, tgt.t, cfg)
	if rep == nil {
		return e.fail("fuzz-broker", ferr)
	}
	if err := writeFuzzReport(dir, rep); err != nil {
		return e.fail("fuzz-broker", err)
	}
	e.printFuzzSummary(rep, dir, ferr)
	switch {
	case rep.Interrupted:
		return exitInterrupted
	case len(rep.Findings) > 0:
		return exitViolation
	case ferr != nil:
		return exitUsage
	}
	return exitOK
}

// dirWord names a broker in a directory name.
func dirWord(broker, addr string) string {
	if addr != "" {
		return "addr"
	}
	if broker == "ours" || broker == "mosquitto" {
		return broker
	}
	return "command"
}

// claimFuzzDir makes dir this run's: new, empty, or (with force) emptied of
// an earlier fuzz run's files.
func claimFuzzDir(dir string, force bool) error {
	ents, err := os.ReadDir(dir)
	if err == nil && len(ents) > 0 {
		if !force {
			return badUsage("fuzz-broker", "%s holds another run; pass -force to replace it or -out another directory", dir)
		}
		for _, name := range []string{"report.md", "findings.json", "replays", "data", "logs"} {
			if err := os.RemoveAll(filepath.Join(dir, name)); err != nil {
				return ioFailure(err, "clear %s", dir)
			}
		}
	}
	return ioFailure(os.MkdirAll(filepath.Join(dir, "replays"), 0o755), "create %s", dir)
}

// fuzzProgress prints a progress line on stderr.
func (e *env) fuzzProgress(p brokerfuzz.Progress) {
	rate := float64(p.Execs) / max(p.Elapsed.Seconds(), 0.001)
	line := fmt.Sprintf("fuzz-broker: %d cases in %s (%.0f/s), corpus %d, findings %d", p.Execs, p.Elapsed.Round(time.Second), rate, p.Corpus, p.Findings)
	if p.Shrinking != "" {
		line += ", " + p.Shrinking
	}
	fmt.Fprintln(e.stderr, line)
}

// printFuzzSummary prints a finding a line, then the counts.
func (e *env) printFuzzSummary(rep *brokerfuzz.Report, dir string, ferr error) {
	state := "done"
	if rep.Interrupted {
		state = "interrupted"
	}
	for _, fd := range rep.Findings {
		fmt.Fprintf(e.stdout, "  finding: %s\n           replay: %s fuzz-broker -replay %s\n", fd, replayPrefix, absPath(fd.File))
	}
	if ferr != nil {
		fmt.Fprintf(e.stdout, "stopped: %v\n", ferr)
	}
	fmt.Fprintf(e.stdout, "fuzz-broker %s: %d cases in %s (%.0f/s), corpus %d, %d findings; %s\n", state, rep.Execs, rep.Elapsed.Round(time.Second),
		float64(rep.Execs)/max(rep.Elapsed.Seconds(), 0.001), rep.Corpus, len(rep.Findings), absPath(filepath.Join(dir, "report.md")))
}

// writeFuzzReport writes report.md, findings.json and the replay files.
func writeFuzzReport(dir string, rep *brokerfuzz.Report) error {
	for i, fd := range append(append([]*brokerfuzz.Finding(nil), rep.Findings...), rep.RefFindings...) {
		if len(fd.Min.Steps) == 0 {
			continue
		}
		prefix := ""
		if i >= len(rep.Findings) {
			prefix = "reference-"
		}
		fd.File = filepath.Join(dir, "replays", fmt.Sprintf("%s%02d-%s.case", prefix, i+1, fd.Slug()))
		var b strings.Builder
		fmt.Fprintf(&b, "# %s\n# %s\n", fd, fd.MinViolation.Detail)
		_, _ = fd.Min.WriteTo(&b)
		if err := os.WriteFile(fd.File, []byte(b.String()), 0o644); err != nil {
			return ioFailure(err, "write %s", fd.File)
		}
	}
	js, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "findings.json"), append(js, '\n'), 0o644); err != nil {
		return ioFailure(err, "write findings.json")
	}
	return ioFailure(os.WriteFile(filepath.Join(dir, "report.md"), []byte(brokerfuzz.Markdown(rep, replayPrefix)), 0o644), "write report.md")
}

// fuzzReplay runs one case file.
func (e *env) fuzzReplay(f fuzzBrokerFlags) int {
	text, err := os.ReadFile(f.replay)
	if err != nil {
		return e.fail("fuzz-broker", badUsage("fuzz-broker", "-replay: %v", err))
	}
	c, err := brokerfuzz.ParseCase(strings.NewReader(string(text)))
	if err != nil {
		return e.fail("fuzz-broker", badUsage("fuzz-broker", "-replay %s: %v", f.replay, err))
	}
	dir, err := os.MkdirTemp("", "simrun-fuzz-replay-")
	if err != nil {
		return e.fail("fuzz-broker", ioFailure(err, "create a scratch directory"))
	}
	defer os.RemoveAll(dir)
	tgt, err := e.startFuzzTarget(&f.target, f.canary, dir, "broker")
	if err != nil {
		return e.fail("fuzz-broker", err)
	}
	defer tgt.stop()
	fmt.Fprintf(e.stdout, "fuzz-broker -replay %s: %s, %d steps on %d connections\n", absPath(f.replay), tgt.t.Name, len(c.Steps), c.Conns())
	vs, err := brokerfuzz.Replay(tgt.t, c, brokerfuzz.Timing{Close: f.closeTimeout})
	for _, v := range vs {
		fmt.Fprintf(e.stdout, "  %s [%s]: %s\n", v.Oracle, v.Rule, v.Detail)
	}
	if err != nil && len(vs) == 0 {
		return e.fail("fuzz-broker", err)
	}
	if len(vs) > 0 {
		fmt.Fprintf(e.stdout, "%d violations\n", len(vs))
		return exitViolation
	}
	fmt.Fprintln(e.stdout, "no violation")
	return exitOK
}
