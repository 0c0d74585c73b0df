// Command campaign runs the native fuzz targets of the lab for a long time:
// every Fuzz target of the packages matched by -pkg (default ./fuzz/...,
// expanded with go list: the fuzz package and fuzz/codec) in turns of
// -slice, several turns at once over -parallel worker slots, for -duration
// in all. A target is named by its function name, or by package.name when
// two packages have a target of that name; -targets matches either form.
//
// Each turn is
//
//	go test ./PKG -run='^$' -fuzz='^Target$' -fuzztime=SLICE -parallel=1
//
// The campaign parses Go's fuzz output to show progress (target, execs/s,
// new interesting inputs, crashers). Go's fuzzer minimizes a crasher and
// writes it to PKG/testdata/fuzz/<Target>/<hash> itself; the campaign
// leaves it there, so plain `go test ./PKG` replays it from then on, stops
// giving that target turns, and lists every crasher at the end with the
// command that reproduces it. Ctrl-C (or SIGTERM) is forwarded to the
// running turns, which stop cleanly, and the summary is printed; a second
// Ctrl-C kills them.
//
// A duration shorter than one -slice turn per target (rounds of -parallel
// turns) gives every target one equal turn instead: duration over the
// rounds, at least 5s, each turn its full length even when builds push the
// wall time past -duration. With -slice given, or when that share would be
// under 5s, the turns keep their length and the campaign warns on stderr
// which targets get no turn and what -duration would reach them.
//
// -ceiling D first measures the machine's limit: it writes a throwaway
// module with an empty fuzz target to a temporary directory and fuzzes it
// for D exactly as the campaign runs its turns (-parallel turns at once,
// one worker each). The summary prints that rate beside each target's and
// each target's share of it. Go's fuzzer costs the same per execution for
// any target of a binary of that size, so no target runs faster; a bigger
// test binary (more instrumented packages) lowers the limit further.
// -ceiling D -duration 0 measures the ceiling alone.
//
// Exit status: 0 nothing found, 1 a crasher or a failing turn (the
// ceiling's included), 2 bad flags or the targets could not be listed, 130
// interrupted.
//
// Usage:
//
//	go run ./fuzz/campaign [-duration 1h] [-slice 5m] [-parallel N]
//	    [-targets REGEXP] [-cache DIR] [-canary] [-progress 30s] [-minimize 5s]
//	    [-ceiling 20s] [-pkg ./fuzz/...,./other/...]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"syscall"
	"time"
)

// canaryTarget is the target that fails on purpose on a needle the fuzzer
// finds in seconds; it runs only with -canary.
const canaryTarget = "FuzzCanary"

// Exit statuses.
const (
	exitOK          = 0
	exitFound       = 1
	exitUsage       = 2
	exitInterrupted = 130
)

// fuzzNameRE matches a fuzz target name.
var fuzzNameRE = regexp.MustCompile(`^Fuzz\w+$`)

// config is the campaign's flags.
type config struct {
	duration time.Duration
	slice    time.Duration
	sliceSet bool // -slice was given: a short campaign keeps it and warns
	parallel int
	targets  *regexp.Regexp
	cache    string // -test.fuzzcachedir; "" keeps Go's (GOCACHE/fuzz)
	canary   bool
	progress time.Duration
	minimize time.Duration // -fuzzminimizetime of each turn; 0 keeps Go's (60s)
	ceiling  time.Duration // how long to fuzz the empty target first; 0: not at all
	pkgs     []string      // package patterns holding the targets, as go list takes them
	dir      string        // where go runs (the module root)
	goCmd    string
}

func main() {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr, sigs))
}

// run is the whole command: parse flags, list targets, run the campaign.
// interrupts delivers Ctrl-C; tests pass their own channel.
func run(args []string, stdout, stderr io.Writer, interrupts <-chan os.Signal) int {
	cfg, err := parseFlags(args, stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		fmt.Fprintln(stderr, "campaign:", err)
		return exitUsage
	}
	var targets []target
	if cfg.duration > 0 {
		listed, err := listTargets(cfg)
		if err != nil {
			fmt.Fprintln(stderr, "campaign:", err)
			return exitUsage
		}
		targets = selectTargets(listed, cfg.targets.MatchString, cfg.canary)
		if len(targets) == 0 {
			fmt.Fprintf(stderr, "campaign: no fuzz target of %s matches %q (listed: %s)\n", strings.Join(cfg.pkgs, " "), cfg.targets, strings.Join(labels(listed), " "))
			return exitUsage
		}
	}
	var ceiling int64
	if cfg.ceiling > 0 {
		rate, code := measureCeiling(cfg, stdout, interrupts)
		if code != exitOK {
			return code
		}
		ceiling = rate
	}
	if cfg.duration == 0 {
		return exitOK
	}
	plan := planTurns(cfg.duration, cfg.slice, cfg.sliceSet, cfg.parallel, len(targets))
	warnUnreached(stderr, cfg, plan, targets)
	cfg.slice = plan.slice
	c := newCampaign(cfg, targets, stdout)
	c.ceiling = ceiling
	if plan.oneEach {
		c.oneEach = true
		c.maxTurns = len(targets)
	}
	return c.run(interrupts)
}

// warnUnreached warns on stderr when the duration cannot give every target
// a turn, naming the targets left out and the duration that would reach
// them.
func warnUnreached(stderr io.Writer, cfg config, plan turnPlan, targets []target) {
	if plan.reached >= len(targets) {
		return
	}
	rounds := (len(targets) + cfg.parallel - 1) / cfg.parallel
	fmt.Fprintf(stderr, "campaign: warning: -duration %v in turns of %v, %d at once, gives only %d of %d targets a turn; no turn for: %s (every target needs -duration %v or a shorter -slice)\n",
		cfg.duration, plan.slice, cfg.parallel, plan.reached, len(targets), strings.Join(labels(targets[plan.reached:]), " "), time.Duration(rounds)*plan.slice)
}

// parseFlags parses and validates the flags.
func parseFlags(args []string, stderr io.Writer) (config, error) {
	fs := flag.NewFlagSet("campaign", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg := config{}
	fs.DurationVar(&cfg.duration, "duration", time.Hour, "total wall time of the campaign")
	fs.DurationVar(&cfg.slice, "slice", 5*time.Minute, "length of one target's turn")
	fs.IntVar(&cfg.parallel, "parallel", runtime.NumCPU(), "turns run at once (each with one fuzz worker)")
	pattern := fs.String("targets", "", "regexp of the targets to run (default: every Fuzz target; "+canaryTarget+" only with -canary)")
	fs.StringVar(&cfg.cache, "cache", "", "directory for the generated corpora kept between runs (default: Go's fuzz cache in GOCACHE)")
	fs.BoolVar(&cfg.canary, "canary", false, "include "+canaryTarget+", which fails on purpose: proves crashers are reported and saved")
	fs.DurationVar(&cfg.progress, "progress", 30*time.Second, "interval of the progress lines")
	fs.DurationVar(&cfg.minimize, "minimize", 0, "time Go may spend minimizing each new input (0: Go's default, 60s; slow targets stall meanwhile)")
	pkgs := fs.String("pkg", "./fuzz/...", "comma-separated package patterns holding the fuzz targets")
	fs.DurationVar(&cfg.ceiling, "ceiling", 0, "first fuzz an empty target in a throwaway module for this long, the machine's limit, and print each target's share of it (0: skip; with -duration 0: only this)")
	fs.StringVar(&cfg.dir, "dir", ".", "directory go runs in (the module root)")
	fs.StringVar(&cfg.goCmd, "go", "go", "the go command")
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	fs.Visit(func(f *flag.Flag) { cfg.sliceSet = cfg.sliceSet || f.Name == "slice" })
	if fs.NArg() > 0 {
		return cfg, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	re, err := regexp.Compile(*pattern)
	if err != nil {
		return cfg, fmt.Errorf("-targets: %w", err)
	}
	cfg.targets = re
	for _, p := range strings.Split(*pkgs, ",") {
		if p = strings.TrimSpace(p); p != "" {
			cfg.pkgs = append(cfg.pkgs, p)
		}
	}
	switch {
	case len(cfg.pkgs) == 0:
		return cfg, fmt.Errorf("-pkg %q names no package", *pkgs)
	case cfg.ceiling != 0 && cfg.ceiling < minTurn:
		return cfg, fmt.Errorf("-ceiling %v is shorter than one turn (%v)", cfg.ceiling, minTurn)
	case cfg.duration == 0 && cfg.ceiling > 0:
		// Only the ceiling.
	case cfg.duration < minTurn:
		return cfg, fmt.Errorf("-duration %v is shorter than one turn (%v)", cfg.duration, minTurn)
	case cfg.slice < minTurn:
		return cfg, fmt.Errorf("-slice %v is shorter than %v", cfg.slice, minTurn)
	case cfg.parallel < 1:
		return cfg, fmt.Errorf("-parallel %d must be at least 1", cfg.parallel)
	case cfg.progress <= 0:
		return cfg, fmt.Errorf("-progress %v must be positive", cfg.progress)
	case cfg.minimize < 0:
		return cfg, fmt.Errorf("-minimize %v must not be negative", cfg.minimize)
	}
	if cfg.cache != "" {
		abs, err := filepath.Abs(cfg.cache)
		if err != nil {
			return cfg, fmt.Errorf("-cache: %w", err)
		}
		cfg.cache = abs
	}
	return cfg, nil
}

// splitLines splits output into lines without their line ends.
func splitLines(s string) []string {
	lines := strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n")
	for i := range lines {
		lines[i] = strings.TrimSpace(lines[i])
	}
	return lines
}

// turnCommand builds the go test command of one turn.
func turnCommand(cfg config, t target, d time.Duration) *exec.Cmd {
	args := []string{"test", t.pkg, "-run=^$", "-fuzz=^" + t.name + "$", "-fuzztime=" + d.String(), "-parallel=1"}
	if cfg.minimize > 0 {
		args = append(args, "-fuzzminimizetime="+cfg.minimize.String())
	}
	if cfg.cache != "" {
		args = append(args, "-args", "-test.fuzzcachedir="+cfg.cache)
	}
	cmd := exec.CommandContext(context.Background(), cfg.goCmd, args...)
	cmd.Dir = cfg.dir
	cmd.Env = os.Environ()
	// Its own process group, so a forwarded signal reaches go test, the
	// test binary and its fuzz workers, as a terminal's Ctrl-C would.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return cmd
}

// reproduce is the command that replays a corpus entry "FuzzX/HASH".
func reproduce(pkg, entry string) string {
	return fmt.Sprintf("go test %s -run='^%s$'", pkg, entry)
}
