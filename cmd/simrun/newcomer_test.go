package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestNewcomerPath walks a newcomer's first hour with the built binary on
// PATH, using only the commands simrun itself prints: a legacy campaign
// (exit 1) prints a shrink command per failing seed; that command, run
// from another directory, shrinks the seed (exit 1) and prints the shrunk
// plan's replay command, which replays it (exit 1) and writes its chart
// with -html; a live run of our broker and clients reruns into its own
// directory twice (exit 0 both times).
func TestNewcomerPath(t *testing.T) {
	t.Parallel()
	bin := t.TempDir()
	build := exec.Command("go", "build", "-o", filepath.Join(bin, "simrun"), ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	path := bin + string(os.PathListSeparator) + os.Getenv("PATH")
	// sh runs a printed command line in dir and returns its status and stdout.
	sh := func(dir, line string, want int) string {
		t.Helper()
		cmd := exec.Command("sh", "-c", line)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "PATH="+path)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, _ := cmd.Output()
		if code := cmd.ProcessState.ExitCode(); code != want {
			t.Fatalf("%s (in %s): exit %d, want %d\nstdout:\n%s\nstderr:\n%s", line, dir, code, want, out, stderr.String())
		}
		return string(out)
	}
	home, elsewhere := t.TempDir(), t.TempDir()

	campaign := sh(home, "simrun campaign -preset legacy -seeds 12 -workers 1 -shrink 0", exitViolation)
	if !strings.HasPrefix(campaign, "campaign: seeds 0..11 shard 0/1, preset legacy, profile swarm, scenario swarm, version mixed") {
		t.Errorf("campaign's first line: %.200s", campaign)
	}
	shrink := printed(t, campaign, "simrun shrink ", "   # shrink it")
	shrunk := sh(elsewhere, shrink, exitViolation)
	replay := printed(t, shrunk, "replay: simrun replay ", "")
	replay = strings.TrimPrefix(replay, "replay: ")
	sh(elsewhere, replay, exitViolation)
	chart := filepath.Join(elsewhere, "chart.html")
	sh(home, replay+" -html "+chart, exitViolation)
	if html := fileText(t, chart); !strings.Contains(html, "simrun replay ") {
		t.Errorf("the chart has no replay line")
	}

	live := "simrun live -broker ours -seed 4 -faults cut -duration 2s -rate 20 -out run"
	for range 2 {
		if out := sh(home, live, exitOK); !strings.HasPrefix(out, "live: seed 4, broker ours") {
			t.Errorf("live's first line: %.200s", out)
		}
	}
}

// printed returns the first line of out that starts with prefix (after
// leading blanks), cut before suffix.
func printed(t *testing.T, out, prefix, suffix string) string {
	t.Helper()
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, prefix) && strings.Contains(line, suffix) {
			if suffix != "" {
				line, _, _ = strings.Cut(line, suffix)
			}
			return line
		}
	}
	t.Fatalf("no line %q...%q in:\n%s", prefix, suffix, out)
	return ""
}
