package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// Exit statuses.
const (
	exitOK          = 0   // nothing promised was violated
	exitViolation   = 1   // a promised invariant was violated
	exitUsage       = 2   // bad flags, values or input files, or the command could not run
	exitIO          = 3   // an output (a directory, file or stdout) could not be written
	exitInterrupted = 130 // a campaign stopped by SIGINT or SIGTERM
)

// exitTable documents the exit statuses, the same for every subcommand.
const exitTable = `
Exit status, the same for every subcommand:
  0    clean: nothing promised was violated (shrink: the run does not fail; broker: stopped by a signal)
  1    a violation: a promised invariant was violated, or a run could not complete
       (run, replay, campaign, merge, shrink, live)
  2    usage: a bad flag, value, name or input file (one line names it); live: a subject did not start;
       campaign, live: a DIR holding another run's files, without -force
  3    I/O: an output (a directory, a file, stdout) could not be written
  130  interrupted by SIGINT or SIGTERM: campaign, shrink and live first write what they have
       (campaign: the summary and the -resume command; shrink: the smallest failing plan so far;
       live: the judged history); broker stops cleanly (0); the others are killed by the signal
       (a shell reports 130)
`

func main() {
	env := &env{stdout: os.Stdout, stderr: os.Stderr, ctx: context.Background(),
		signals: true, terminal: stdoutIsTerminal(), progressEvery: textProgressEvery}
	tuneGC(os.Getenv)
	os.Exit(env.run(os.Args[1:]))
}

// run is the whole command; tests drive it directly. It returns the exit
// status: 0 ok, 1 a violation was found, 2 a usage error.
func run(args []string, stdout, stderr io.Writer) int {
	e := &env{stdout: stdout, stderr: stderr, ctx: context.Background()}
	return e.run(args)
}

// env is what a subcommand runs with: its output streams, the context that a
// signal cancels, and whether stdout is a terminal (for the progress bar).
type env struct {
	stdout, stderr io.Writer
	ctx            context.Context
	// signals makes a campaign catch SIGINT and SIGTERM (cancelling ctx)
	// until the process exits; other subcommands keep the default
	// behaviour (Ctrl-C kills).
	signals  bool
	terminal bool
	// progressEvery, when stdout is not a terminal, is how often a long job
	// prints a progress line to stderr (0: never, as in tests).
	progressEvery time.Duration
	// afterResult, if set, is called by a campaign after each recorded
	// result, and by shrink -bench after each seed of its campaign step
	// (tests use it to interrupt a campaign part way).
	afterResult func(done int)
	// afterShrinkRun, if set, is called by shrink after each candidate run
	// (tests use it to interrupt a shrink part way).
	afterShrinkRun func(runs int)
}

// command is one subcommand.
type command struct {
	name, args, doc string
	run             func(e *env, args []string) int
}

// commands lists the subcommands in the order -h shows them.
func commands() []command {
	return []command{
		{"run", "[flags]", "run one seed and print what happened and what it violated", (*env).cmdRun},
		{"replay", "FILE [flags]", "replay a saved plan file and print the same summary", (*env).cmdReplay},
		{"campaign", "[flags]", "run many seeds over workers; save failing plans; resumable and shardable", (*env).cmdCampaign},
		{"shrink", "FILE | -seed N [flags]", "shrink a failing plan or seed to a small plan that fails the same way", (*env).cmdShrink},
		{"merge", "DIR...", "combine the results.jsonl of campaign shards into one summary", (*env).cmdMerge},
		{"experiment", "NAME [flags] | -list", "run a failure-rate sweep and write CSV, PNG and SVG", (*env).cmdExperiment},
		{"live", "[flags]", "judge real brokers and clients (processes) under real faults by the same model", (*env).cmdLive},
		{"fuzz-broker", "[flags]", "fuzz a broker over the wire with the strict codec as the oracle; replay findings", (*env).cmdFuzzBroker},
		{"broker", "-data DIR [flags]", "serve this project's broker over TCP until signalled; restarts from DIR", (*env).cmdBroker},
		{"presets", "", "list the engine policy presets", (*env).cmdPresets},
		{"profiles", "", "list the fault profiles", (*env).cmdProfiles},
		{"scenarios", "", "list the scenarios", (*env).cmdScenarios},
		{"version", "", "print simrun's module version, VCS commit and Go version", (*env).cmdVersion},
		{"help", "[SUBCOMMAND]", "print the help of a subcommand (or this list)", (*env).cmdHelp},
	}
}

// run dispatches to the subcommand named by args[0].
func (e *env) run(args []string) int {
	if len(args) == 0 {
		e.topUsage(e.stderr)
		return exitUsage
	}
	switch args[0] {
	case "-h", "-help", "--help":
		e.topUsage(e.stdout)
		return exitOK
	case "-version", "--version":
		return e.runTracked("version", func() int { return e.cmdVersion(args[1:]) })
	}
	for _, c := range commands() {
		if c.name == args[0] {
			return e.runTracked(c.name, func() int { return c.run(e, args[1:]) })
		}
	}
	fmt.Fprintf(e.stderr, "simrun: unknown subcommand %q\n", args[0])
	fmt.Fprintln(e.stderr, "Run 'simrun -h' for the list of subcommands.")
	return exitUsage
}

// runTracked runs a subcommand with its stdout tracked: a command that
// would exit 0 or 1 exits 3 (I/O) when its stdout could not be written (a
// full disk, a closed pipe), saying so on stderr.
func (e *env) runTracked(name string, cmd func() int) int {
	tw := &trackWriter{w: e.stdout}
	e.stdout = tw
	code := cmd()
	if tw.err != nil && (code == exitOK || code == exitViolation) {
		fmt.Fprintf(e.stderr, "simrun %s: writing stdout: %v\n", name, tw.err)
		return exitIO
	}
	return code
}

// trackWriter remembers the first error of its writer.
type trackWriter struct {
	w   io.Writer
	err error
}

func (t *trackWriter) Write(p []byte) (int, error) {
	n, err := t.w.Write(p)
	if err != nil && t.err == nil {
		t.err = err
	}
	return n, err
}

// topUsage lists the subcommands.
func (e *env) topUsage(w io.Writer) {
	fmt.Fprintln(w, "simrun runs, replays and campaigns deterministic simulations of the MQTT engine.")
	fmt.Fprintln(w, "\nUsage: simrun <subcommand> [flags]\n\nSubcommands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-11s %-22s %s\n", c.name, c.args, c.doc)
	}
	fmt.Fprint(w, exitTable)
	fmt.Fprintln(w, "Run 'simrun <subcommand> -h' (or 'simrun help <subcommand>') for its flags.")
}

// catchSignals makes SIGINT and SIGTERM cancel e.ctx instead of killing the
// process, when e.signals, for the rest of the process's life: a campaign
// exits (130) only once its summary is written and its -resume command
// printed. Every further signal (a second Ctrl-C, `timeout -s INT`
// signalling the child and then its process group) is caught too and noted
// on stderr once: it can never skip the summary.
func (e *env) catchSignals() {
	if !e.signals {
		return
	}
	ctx, cancel := context.WithCancel(e.ctx)
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		s := <-sigs
		cancel()
		s = <-sigs
		fmt.Fprintf(e.stderr, "simrun: %v again: still stopping; the summary and the -resume command come first\n", s)
		for range sigs {
		}
	}()
	e.ctx = ctx
}
