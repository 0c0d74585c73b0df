package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// ceilingTarget is the empty fuzz target of the throwaway module.
const ceilingTarget = "FuzzNothing"

// ceilingModule is the throwaway module: one package with only a test file
// importing only testing, so its test binary is as small as Go's fuzzer
// allows and its per-execution cost is the fuzzer's own.
var ceilingModule = map[string]string{
	"go.mod": "module fuzzceiling\n\ngo 1.22\n",
	"ceiling_test.go": `package fuzzceiling

import "testing"

// ` + ceilingTarget + ` does nothing: its execs/s is the fuzzer's limit.
func ` + ceilingTarget + `(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {})
}
`,
}

// measureCeiling fuzzes the empty target of a throwaway module for
// cfg.ceiling the way the campaign runs its turns (cfg.parallel turns at
// once, one worker each, with a fresh fuzz cache) and returns its average
// execs/s per turn, or the exit status when it could not.
func measureCeiling(cfg config, out io.Writer, interrupts <-chan os.Signal) (int64, int) {
	dir, err := os.MkdirTemp("", "fuzz-ceiling-")
	if err != nil {
		fmt.Fprintln(out, "campaign: ceiling:", err)
		return 0, exitFound
	}
	defer os.RemoveAll(dir)
	for name, text := range ceilingModule {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			fmt.Fprintln(out, "campaign: ceiling:", err)
			return 0, exitFound
		}
	}
	fmt.Fprintf(out, "ceiling: fuzzing an empty target in a throwaway module for %v, %d turn(s) at once, one worker each\n", cfg.ceiling, cfg.parallel)
	c := newCampaign(ceilingConfig(cfg, dir), []target{{name: ceilingTarget, pkg: ".", dir: dir, label: ceilingTarget}}, io.Discard)
	c.maxTurns = cfg.parallel
	code := c.run(interrupts)
	s := c.stats[ceilingTarget]
	switch {
	case code == exitInterrupted:
		fmt.Fprintln(out, "ceiling: interrupted")
		return 0, code
	case code != exitOK || s.avg() == 0:
		fmt.Fprintf(out, "campaign: ceiling: the empty target did not run (exit %d, %d execs):\n%s\n", code, s.execs, strings.Join(c.failures, "\n"))
		return 0, exitFound
	}
	fmt.Fprintf(out, "ceiling: %d execs/s per turn (%d execs in %d turn(s) of %ds in all)\n", s.avg(), s.execs, s.turns, s.seconds)
	return s.avg(), exitOK
}

// ceilingConfig is the campaign configuration of the ceiling: one turn of
// cfg.ceiling per slot (the caller limits the turns), run in dir, with a
// fuzz cache of its own so every measurement starts from the same empty
// corpus.
func ceilingConfig(cfg config, dir string) config {
	cc := cfg
	cc.dir = dir
	cc.pkgs = []string{"."}
	cc.slice = cfg.ceiling
	// A turn is the time left cut to whole seconds: the extra second makes
	// the turns exactly cfg.ceiling long.
	cc.duration = cfg.ceiling + time.Second
	cc.cache = filepath.Join(dir, "cache")
	cc.minimize = 0
	cc.canary = false
	return cc
}
