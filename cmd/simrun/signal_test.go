package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSecondSignalKeepsSummary: what `timeout -s INT` does to a campaign
// (SIGINT to the process, then to its process group, which a shell's Ctrl-C
// also reaches) never loses the summary: however the signals fall during the
// stop, the campaign exits 130 having written summary.txt and printed the
// -resume command. Several rounds, the later signals repeated, so one lands
// while the campaign writes its summary.
func TestSecondSignalKeepsSummary(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for round := range 3 {
		dir := t.TempDir()
		cmd := exec.Command(exe, "campaign", "-seeds", "1000000", "-workers", "2", "-out", dir)
		cmd.Env = append(os.Environ(), childEnv+"=1")
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan struct{})
		go func() { cmd.Wait(); close(exited) }()
		waitForResults(t, dir, 20+20*round, exited)
		pid := cmd.Process.Pid
		syscall.Kill(pid, syscall.SIGINT)
		time.Sleep(time.Duration(round) * 100 * time.Millisecond)
	signals:
		for {
			select {
			case <-exited:
				break signals
			case <-time.After(200 * time.Microsecond):
				syscall.Kill(-pid, syscall.SIGINT)
			}
		}
		if code := cmd.ProcessState.ExitCode(); code != exitInterrupted {
			t.Fatalf("round %d: exit %d (%v), want %d\nstdout:\n%s\nstderr:\n%s", round, code, cmd.ProcessState, exitInterrupted, out.String(), errb.String())
		}
		if _, err := os.Stat(filepath.Join(dir, "summary.txt")); err != nil {
			t.Errorf("round %d: %v", round, err)
		}
		if !strings.Contains(out.String(), "continue with:\n  "+replayPrefix+" campaign ") {
			t.Errorf("round %d: no -resume command:\n%s", round, out.String())
		}
	}
}

// waitForResults waits until dir's results.jsonl has n lines (the campaign
// is well under way), failing if the campaign exits first.
func waitForResults(t *testing.T, dir string, n int, exited <-chan struct{}) {
	t.Helper()
	for {
		data, _ := os.ReadFile(filepath.Join(dir, resultsFile))
		if bytes.Count(data, []byte("\n")) >= n {
			return
		}
		select {
		case <-exited:
			t.Fatal("the campaign exited before it was interrupted")
		case <-time.After(10 * time.Millisecond):
		}
	}
}
