package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// liveRun runs simrun live with a fresh run directory and short bounds
// (CI-sized), plus args; it returns the result and the run directory.
func liveRun(t *testing.T, args ...string) (result, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "run")
	base := []string{"live", "-out", dir, "-duration", "5s", "-rate", "40", "-liveness", "8s", "-fault-interval", "700ms"}
	return simrun(t, append(base, args...)...), dir
}

// wantRunDir checks the run directory holds every file of the contract.
func wantRunDir(t *testing.T, dir string) {
	t.Helper()
	for _, f := range []string{"summary.txt", "violations.txt", "history.jsonl", "schedule.txt", "logs"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("run directory lacks %s: %v", f, err)
		}
	}
}

// TestLiveOursUnderClientFaults (acceptance): our broker (simrun broker, a
// child process) and our clients under client kills and cuts keep every
// promise of the spec.
func TestLiveOursUnderClientFaults(t *testing.T) {
	t.Parallel()
	r, dir := liveRun(t, "-seed", "3", "-faults", "client-kill,cut")
	r.want(t, exitOK)
	if !strings.Contains(r.stdout, "violations   none") || !strings.Contains(r.stdout, "client-kill") {
		t.Errorf("summary:\n%s", r.stdout)
	}
	wantRunDir(t, dir)
}

// TestLiveLegacyBrokerCaught (sensitivity): our broker with the legacy
// preset (no persistence) killed under load loses what it held: the
// spec's NoLoss is violated and the run exits 1 with a replay command.
func TestLiveLegacyBrokerCaught(t *testing.T) {
	t.Parallel()
	r, dir := liveRun(t, "-seed", "5", "-broker-preset", "legacy", "-faults", "broker-kill", "-liveness", "3s")
	r.want(t, exitViolation)
	for _, want := range []string{"VIOLATION    NoLoss", "replay the fault schedule:", "-broker-preset 'legacy'"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}
	v, err := os.ReadFile(filepath.Join(dir, "violations.txt"))
	if err != nil || !strings.Contains(string(v), "Accepted") {
		t.Errorf("violations.txt lacks the history excerpt (%v):\n%.2000s", err, v)
	}
}

// TestLiveUsage: bad flags and a broker that does not start exit 2, the
// latter with its stderr.
func TestLiveUsage(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-faults", "meteor"}, "meteor"},
		{[]string{"-promise", "forever"}, "forever"},
		{[]string{"-qos", "3"}, "-qos"},
		{[]string{"-broker", "x {nope}"}, "{nope}"},
		{[]string{"-broker-addr", "127.0.0.1:1", "-faults", "broker-kill"}, "broker-kill"},
		{[]string{"-broker", "echo kaput >&2; exit 4"}, "kaput"},
	} {
		r, _ := liveRun(t, c.args...)
		r.want(t, exitUsage)
		if !strings.Contains(r.stderr, c.want) {
			t.Errorf("%v: stderr lacks %q:\n%s", c.args, c.want, r.stderr)
		}
	}
}
