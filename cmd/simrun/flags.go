package main

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/mqttlab/mqttlab/engine"
	"github.com/mqttlab/mqttlab/sim"
	"golang.org/x/term"
)

// errHelp is returned by parse when -h was asked for (help already printed).
var errHelp = errors.New("help requested")

// usageError is a bad flag, value or argument: it prints as one line plus a
// hint to -h, and exits 2.
type usageError struct {
	cmd string
	msg string
}

func (u usageError) Error() string { return u.msg }

// badUsage returns a usage error of subcommand cmd.
func badUsage(cmd, format string, args ...any) error {
	return usageError{cmd: cmd, msg: fmt.Sprintf(format, args...)}
}

// ioError is a failure to write an output (a directory, a file, stdout):
// it exits 3, apart from the usage errors' 2.
type ioError struct{ err error }

func (i ioError) Error() string { return i.err.Error() }
func (i ioError) Unwrap() error { return i.err }

// ioFailure marks err (if not nil) as an I/O failure, described by the
// format and args before it.
func ioFailure(err error, format string, args ...any) error {
	if err == nil {
		return nil
	}
	return ioError{fmt.Errorf(format+": %w", append(args, err)...)}
}

// fail reports err for subcommand cmd and returns the exit status: a usage
// error gets a hint to -h; an I/O failure exits 3, every other error 2.
func (e *env) fail(cmd string, err error) int {
	if errors.Is(err, errHelp) {
		return exitOK
	}
	msg := strings.ReplaceAll(err.Error(), "\n", " ")
	fmt.Fprintf(e.stderr, "simrun %s: %s\n", cmd, msg)
	var u usageError
	if errors.As(err, &u) {
		fmt.Fprintf(e.stderr, "Run 'simrun %s -h' for usage.\n", cmd)
	}
	var ioe ioError
	if errors.As(err, &ioe) {
		return exitIO
	}
	return exitUsage
}

// flagSet is a subcommand's flag set: errors come back instead of exiting,
// and nothing is printed while parsing (help goes to stdout on -h).
type flagSet struct {
	*flag.FlagSet
	cmd, args, doc string
	// footer, if set, is printed after the flags (broker's config keys).
	footer string
	stdout io.Writer
}

// newFlagSet returns the flag set of subcommand cmd, whose positional
// arguments are described by args and whose purpose is doc.
func (e *env) newFlagSet(cmd, args, doc string) *flagSet {
	fs := &flagSet{FlagSet: flag.NewFlagSet(cmd, flag.ContinueOnError), cmd: cmd, args: args, doc: doc, stdout: e.stdout}
	fs.SetOutput(io.Discard)
	return fs
}

// help prints the subcommand's usage and flags to stdout.
func (fs *flagSet) help() {
	fmt.Fprintf(fs.stdout, "Usage: simrun %s %s\n\n%s\n", fs.cmd, fs.args, fs.doc)
	hasFlags := false
	fs.VisitAll(func(*flag.Flag) { hasFlags = true })
	if hasFlags {
		fmt.Fprintln(fs.stdout, "\nFlags:")
		fs.SetOutput(fs.stdout)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
	}
	if fs.footer != "" {
		fmt.Fprintf(fs.stdout, "\n%s\n", fs.footer)
	}
}

// parse parses args, allowing positional arguments between flags, and
// returns the positional arguments. -h prints help and returns errHelp.
func (fs *flagSet) parse(args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fs.help()
				return nil, errHelp
			}
			return nil, badUsage(fs.cmd, "%v", err)
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if rest[0] == "--" {
			return append(pos, rest[1:]...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// numberValue is a whole-number flag within [min, max] whose errors say
// what the flag wants in words: "must be a positive number" (min 1) or "must
// be a whole number >= 0" (min 0), never the flag package's "parse error".
type numberValue struct {
	get      func() uint64
	set      func(uint64)
	min, max uint64
}

func (v numberValue) String() string {
	if v.get == nil { // the flag package's zero value, for -h
		return "0"
	}
	return strconv.FormatUint(v.get(), 10)
}

func (v numberValue) Set(s string) error {
	n, err := strconv.ParseUint(strings.TrimSpace(s), 10, 64)
	if errors.Is(err, strconv.ErrRange) || (err == nil && n > v.max) {
		return fmt.Errorf("must be at most %d", v.max)
	}
	if err != nil || n < v.min {
		if v.min == 1 {
			return errors.New("must be a positive number")
		}
		return fmt.Errorf("must be a whole number >= %d", v.min)
	}
	v.set(n)
	return nil
}

// uint64Flag defines a uint64 flag of at least min.
func (fs *flagSet) uint64Flag(name string, value, min uint64, usage string) *uint64 {
	p := &value
	fs.Var(numberValue{get: func() uint64 { return *p }, set: func(n uint64) { *p = n }, min: min, max: math.MaxUint64}, name, usage)
	return p
}

// intFlag defines an int flag of at least min (and at most MaxInt32).
func (fs *flagSet) intFlag(name string, value, min int, usage string) *int {
	p := &value
	fs.Var(numberValue{get: func() uint64 { return uint64(*p) }, set: func(n uint64) { *p = int(n) }, min: uint64(min), max: math.MaxInt32}, name, usage)
	return p
}

// isSet reports whether the flag called name was given on the command line.
func (fs *flagSet) isSet(name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// worldFlags are the flags that choose a world: profile, preset, scenario
// and protocol version.
type worldFlags struct {
	profile, preset, scenario, version, judge string
	workload                                  string
}

// Defaults of the world flags.
const (
	defaultProfile  = "swarm"
	defaultPreset   = "fixed"
	defaultScenario = sim.SwarmScenario // the campaign's world is every command's
	defaultVersion  = "5"
	defaultJudge    = judgeSpec
)

// add registers the world flags on fs.
func (w *worldFlags) add(fs *flagSet) {
	fs.StringVar(&w.profile, "profile", defaultProfile, "fault profile (see 'simrun profiles')")
	fs.StringVar(&w.preset, "preset", defaultPreset, "engine policy preset (see 'simrun presets')")
	fs.StringVar(&w.scenario, "scenario", defaultScenario, "scenario (see 'simrun scenarios')")
	fs.StringVar(&w.version, "version", "", "MQTT version of every client: 3 (or 3.1.1) or 5 (or 5.0); default: under -scenario swarm each client draws its own (the world's version is then 'mixed'; -version pins it, as -workload version= does), else 5")
	fs.StringVar(&w.workload, "workload", "", "pin dimensions of the swarm scenario's workload: `key=value[,key=value]` (key=draw unpins; "+
		defaultPinsText()+"); keys: "+workloadKeys())
	w.addJudge(fs)
}

// defaultPinsText says what sim.DefaultWorkload pins, for -workload's usage.
func defaultPinsText() string {
	if pins := sim.DefaultWorkload().String(); pins != "" {
		return "the defaults pin " + pins
	}
	return "by default nothing is pinned: every dimension is drawn from the seed"
}

// workloadKeys lists the workload keys and their values, for -workload's usage.
func workloadKeys() string {
	var parts []string
	for _, d := range sim.WorkloadDims() {
		parts = append(parts, d.Key+"="+d.Values)
	}
	return strings.Join(parts, " ")
}

// addJudge registers -judge on fs.
func (w *worldFlags) addJudge(fs *flagSet) {
	fs.StringVar(&w.judge, "judge", string(defaultJudge), "invariants a run is held to: spec (what the fixed engine promises under the run's faults) or preset (what the run's preset promises)")
}

// world is a validated choice of world.
type world struct {
	profile  string
	preset   engine.Preset
	scenario string
	level    uint8 // MQTT protocol level: 4 (3.1.1) or 5
	judge    judge
	// workload is the swarm scenario's pins: sim.DefaultWorkload with
	// -workload's over it (zero for the other scenarios).
	workload sim.Workload
}

// resolve validates the world flags of subcommand cmd.
func (w worldFlags) resolve(cmd string) (world, error) {
	j, err := parseJudge(w.judge)
	if err != nil {
		return world{}, badUsage(cmd, "bad -judge %q: %v", w.judge, err)
	}
	level, err := parseVersion(cmp.Or(w.version, defaultVersion))
	if err != nil {
		return world{}, badUsage(cmd, "bad -version %q: %v", w.version, err)
	}
	if _, err := sim.ProfileByName(w.profile); err != nil {
		return world{}, badUsage(cmd, "bad -profile: %v", err)
	}
	preset, err := engine.PresetByName(w.preset)
	if err != nil {
		return world{}, badUsage(cmd, "bad -preset: %v", err)
	}
	if _, err := sim.ScenarioByName(w.scenario); err != nil {
		return world{}, badUsage(cmd, "bad -scenario: %v", err)
	}
	wl, err := w.resolveWorkload(cmd)
	if err != nil {
		return world{}, err
	}
	if w.scenario == sim.SwarmScenario {
		if wl, level, err = w.pinVersion(cmd, wl, level); err != nil {
			return world{}, err
		}
	}
	return world{profile: w.profile, preset: preset, scenario: w.scenario, level: level, judge: j, workload: wl}, nil
}

// resolveWorkload returns the swarm scenario's pins: the defaults with
// -workload's over them.
func (w worldFlags) resolveWorkload(cmd string) (sim.Workload, error) {
	wl, err := sim.DefaultWorkload().With(w.workload)
	if err != nil {
		return sim.Workload{}, badUsage(cmd, "bad -workload %q: %v", w.workload, err)
	}
	if w.scenario != sim.SwarmScenario {
		if w.workload != "" {
			return sim.Workload{}, badUsage(cmd, "bad -workload %q: only -scenario %s has a workload to pin", w.workload, sim.SwarmScenario)
		}
		return sim.Workload{}, nil
	}
	return wl, nil
}

// pinVersion returns the swarm workload with -version pinned into it (an
// explicit -version pins every client's version, as -workload version=
// does) and the run's protocol level: the pinned one, else 5 (the clients
// then draw theirs). A -version that contradicts -workload's is refused.
func (w worldFlags) pinVersion(cmd string, wl sim.Workload, level uint8) (sim.Workload, uint8, error) {
	pinned, ok := wl.PinnedVersion()
	switch {
	case w.version == "" && ok:
		return wl, pinned, nil
	case w.version == "":
		return wl, 5, nil
	case ok && pinned != level:
		return wl, 0, badUsage(cmd, "bad -version %q: -workload pins version=%d", w.version, pinned)
	}
	wl, err := wl.With("version=" + strconv.Itoa(int(level)))
	return wl, level, err
}

// parseVersion reads an MQTT version as the user writes it and returns the
// protocol level.
func parseVersion(s string) (uint8, error) {
	switch s {
	case "3", "3.1.1":
		return 4, nil
	case "5", "5.0":
		return 5, nil
	case "4":
		return 0, errors.New("want 3 (or 3.1.1) or 5 (or 5.0); 4 is MQTT 3.1.1's protocol level: for MQTT 3.1.1 write 3")
	}
	return 0, errors.New("want 3 (or 3.1.1) or 5 (or 5.0): the MQTT versions the engine speaks")
}

// versionLabel is the MQTT version a world's clients speak, as headers
// show it: "3.1.1", "5", or "mixed" for a swarm run whose clients each
// draw theirs.
func versionLabel(scenario string, level uint8, wl sim.Workload) string {
	if _, pinned := wl.PinnedVersion(); scenario == sim.SwarmScenario && !pinned {
		return sim.MixedVersion
	}
	switch level {
	case 4:
		return "3.1.1"
	case 5:
		return "5"
	}
	return strconv.Itoa(int(level))
}

// versionLabel is the world's MQTT version as headers show it.
func (w world) versionLabel() string { return versionLabel(w.scenario, w.level, w.workload) }

// describe is the world in words, every command's first line: preset,
// profile, scenario, version (mixed under swarm unless pinned), judge,
// and the workload's pins.
func (w world) describe() string { return describeConfig(w.config(0), w.judge) }

// describeConfig is the world of cfg judged by j in words (world.describe).
func describeConfig(cfg sim.Config, j judge) string {
	s := fmt.Sprintf("preset %s, profile %s, scenario %s, version %s, judge %s", cfg.Preset.Name, cfg.Profile, cfg.Scenario,
		versionLabel(cfg.Scenario, cfg.Version, cfg.Workload), j)
	if pins := cfg.Workload.String(); pins != "" {
		s += ", workload " + pins
	}
	return s
}

// versionName is the MQTT version of a protocol level, as the flags take it.
func versionName(level uint8) string {
	switch level {
	case 4:
		return "3"
	case 5:
		return "5"
	}
	return strconv.Itoa(int(level))
}

// config returns the sim config of seed in this world. The model check is
// left to the judge (SkipCheck).
func (w world) config(seed uint64) sim.Config {
	return sim.Config{Seed: seed, Profile: w.profile, Preset: w.preset, Scenario: w.scenario, Version: w.level, Workload: w.workload, SkipCheck: true}
}

// flagArgs returns the command-line flags that choose this world (for
// replay commands).
func (w world) flagArgs() string {
	s := fmt.Sprintf("-preset %s -profile %s -scenario %s", w.preset.Name, w.profile, w.scenario)
	if w.scenario != sim.SwarmScenario { // a swarm world's version is its workload's
		s += " -version " + versionName(w.level)
	}
	return s + w.workloadArg() + w.judge.flagArg()
}

// workloadArg is " -workload PINS" for a swarm world with pins, else "".
func (w world) workloadArg() string {
	if w.workload.IsZero() {
		return ""
	}
	return " -workload " + w.workload.String()
}

// flagArg is " -judge X" when X is not the default, else "".
func (j judge) flagArg() string {
	if j == defaultJudge {
		return ""
	}
	return " -judge " + string(j)
}

// stdoutIsTerminal reports whether the process's stdout is a terminal.
func stdoutIsTerminal() bool { return term.IsTerminal(int(os.Stdout.Fd())) }
