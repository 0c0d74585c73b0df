package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"path/filepath"
	"testing"
)

// failingWriter is a stdout that cannot be written (a full disk).
type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("no space left on device") }

// TestExitStatuses: one exit-status table (0 clean, 1 violation, 2 usage,
// 3 I/O, 130 interrupted), applied by every subcommand: each row is one
// subcommand driven to one status, and every subcommand has its rows.
func TestExitStatuses(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "file", "not a directory\n")
	under := filepath.Join(file, "sub")
	pass, fail := filepath.Join(dir, "pass.plan"), filepath.Join(dir, "fail.plan")
	simrun(t, "run", "-seed", "1", "-scenario", "standard", "-save", pass).want(t, exitOK)
	simrun(t, "run", "-seed", "4", "-preset", "legacy", "-scenario", "standard", "-save", fail).want(t, exitViolation)
	clean, failing := filepath.Join(dir, "clean"), filepath.Join(dir, "failing")
	simrun(t, "campaign", "-seeds", "2", "-workers", "1", "-out", clean).want(t, exitOK)
	simrun(t, "campaign", "-seeds", "6", "-workers", "1", "-preset", "legacy", "-scenario", "standard", "-shrink", "0", "-out", failing).want(t, exitViolation)
	out := func(name string) string { return filepath.Join(t.TempDir(), name) }

	const stdoutFails = -1 // interrupt: stdout is a failingWriter instead
	cases := []struct {
		cmd       string
		args      []string
		interrupt int // > 0: cancel after that many results (campaign) or candidate runs (shrink)
		want      int
	}{
		{"run", []string{"-seed", "1"}, 0, exitOK},
		{"run", []string{"-plan", fail}, 0, exitViolation},
		{"run", []string{"-nosuch"}, 0, exitUsage},
		{"run", []string{"-seed", "1", "-save", "/dev/full"}, 0, exitIO},
		{"run", []string{"-seed", "1"}, stdoutFails, exitIO},
		{"replay", []string{pass}, 0, exitOK},
		{"replay", []string{fail}, 0, exitViolation},
		{"replay", []string{filepath.Join(dir, "missing.plan")}, 0, exitUsage},
		{"replay", []string{pass, "-trace", "/dev/full"}, 0, exitIO},
		{"replay", []string{fail}, stdoutFails, exitIO},
		{"campaign", []string{"-seeds", "2", "-workers", "1", "-out", out("c")}, 0, exitOK},
		{"campaign", []string{"-seeds", "6", "-workers", "1", "-preset", "legacy", "-scenario", "standard", "-shrink", "0", "-out", out("c")}, 0, exitViolation},
		{"campaign", []string{"-seeds", "0"}, 0, exitUsage},
		{"campaign", []string{"-seeds", "2", "-out", under}, 0, exitIO},
		{"campaign", []string{"-seeds", "2", "-workers", "1", "-out", out("c")}, stdoutFails, exitIO},
		{"campaign", []string{"-seeds", "40", "-workers", "1", "-shrink", "0", "-out", out("c")}, 2, exitInterrupted},
		{"shrink", []string{pass}, 0, exitOK},
		{"shrink", []string{fail, "-budget", "5", "-out", out("m.plan")}, 0, exitViolation},
		{"shrink", []string{fail, "-out", fail}, 0, exitUsage},
		{"shrink", []string{fail, "-budget", "5", "-out", "/dev/full"}, 0, exitIO},
		{"shrink", []string{fail, "-budget", "5", "-o", out("m.plan")}, stdoutFails, exitIO},
		{"shrink", []string{fail, "-out", out("m.plan")}, 10, exitInterrupted},
		{"merge", []string{clean}, 0, exitOK},
		{"merge", []string{failing}, 0, exitViolation},
		{"merge", nil, 0, exitUsage},
		{"merge", []string{clean}, stdoutFails, exitIO},
		{"experiment", []string{"ack-order", "-trials", "1", "-workers", "1", "-out", out("x")}, 0, exitOK},
		{"experiment", []string{"nosuch"}, 0, exitUsage},
		{"experiment", []string{"ack-order", "-trials", "1", "-out", under}, 0, exitIO},
		{"experiment", []string{"-list"}, stdoutFails, exitIO},
		{"live", []string{"-qos", "3"}, 0, exitUsage},
		{"live", []string{"-out", under, "-seed", "1"}, 0, exitIO},
		{"fuzz-broker", []string{"-nosuch"}, 0, exitUsage},
		{"fuzz-broker", []string{"-out", under, "-execs", "1"}, 0, exitIO},
		{"broker", nil, 0, exitUsage},
		{"broker", []string{"-data", under, "-listen", "127.0.0.1:0"}, 0, exitIO},
		{"presets", nil, 0, exitOK},
		{"presets", []string{"x"}, 0, exitUsage},
		{"presets", nil, stdoutFails, exitIO},
		{"profiles", nil, 0, exitOK},
		{"profiles", []string{"x"}, 0, exitUsage},
		{"profiles", nil, stdoutFails, exitIO},
		{"scenarios", nil, 0, exitOK},
		{"scenarios", []string{"x"}, 0, exitUsage},
		{"scenarios", nil, stdoutFails, exitIO},
		{"version", nil, 0, exitOK},
		{"version", []string{"x"}, 0, exitUsage},
		{"version", nil, stdoutFails, exitIO},
		{"help", []string{"run"}, 0, exitOK},
		{"help", []string{"nosuch"}, 0, exitUsage},
		{"help", []string{"run"}, stdoutFails, exitIO},
	}
	covered := map[string]map[int]bool{}
	for _, c := range cases {
		if covered[c.cmd] == nil {
			covered[c.cmd] = map[int]bool{}
		}
		covered[c.cmd][c.want] = true
		t.Run(c.cmd, func(t *testing.T) {
			var stdout io.Writer = &bytes.Buffer{}
			if c.interrupt == stdoutFails {
				stdout = failingWriter{}
			}
			var stderr bytes.Buffer
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			e := &env{stdout: stdout, stderr: &stderr, ctx: ctx}
			if c.interrupt > 0 {
				e.afterResult = func(done int) {
					if done == c.interrupt {
						cancel()
					}
				}
				e.afterShrinkRun = func(runs int) {
					if runs == c.interrupt {
						cancel()
					}
				}
			}
			if code := e.run(append([]string{c.cmd}, c.args...)); code != c.want {
				t.Errorf("simrun %s %v: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", c.cmd, c.args, code, c.want, stdout, stderr.String())
			}
		})
	}
	for _, c := range commands() {
		if !covered[c.name][exitUsage] || !covered[c.name][exitIO] {
			t.Errorf("the table has no usage (2) or I/O (3) row of %s", c.name)
		}
	}
}
