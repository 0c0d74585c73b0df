package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestFuzzBrokerSmoke is CI's smoke run of simrun fuzz-broker: our broker
// (a child process, as a user runs it) is clean over a 30 s run; the
// keep-open canary is caught within 20 s and its replay file trips the
// canary, not our broker.
func TestFuzzBrokerSmoke(t *testing.T) {
	dir := t.TempDir()
	r := simrun(t, "fuzz-broker", "-duration", "30s", "-seed", "424242", "-close-timeout", "1s", "-out", filepath.Join(dir, "ours")).want(t, exitOK)
	if !strings.Contains(r.stdout, "0 findings") {
		t.Fatalf("ours: %s", r.stdout)
	}
	for _, f := range []string{"report.md", "findings.json"} {
		if _, err := os.Stat(filepath.Join(dir, "ours", f)); err != nil {
			t.Errorf("ours: %v", err)
		}
	}
	r = simrun(t, "fuzz-broker", "-canary", "keep-open-on-malformed", "-duration", "20s", "-shrink", "5s", "-close-timeout", "1s", "-out", filepath.Join(dir, "canary")).want(t, exitViolation)
	m := regexp.MustCompile(`finding: not enforced .*: left-open \d+;.*\n\s+replay: \S+ fuzz-broker -replay (\S+)`).FindStringSubmatch(r.stdout)
	if m == nil {
		t.Fatalf("canary not caught as left-open:\n%s", r.stdout)
	}
	report, err := os.ReadFile(filepath.Join(dir, "canary", "report.md"))
	if err != nil || !strings.Contains(string(report), "left-open") {
		t.Fatalf("report.md: %v\n%s", err, report)
	}
	simrun(t, "fuzz-broker", "-replay", m[1], "-canary", "keep-open-on-malformed", "-close-timeout", "1s").want(t, exitViolation)
	simrun(t, "fuzz-broker", "-replay", m[1], "-close-timeout", "1s").want(t, exitOK)
}

// TestFuzzBrokerUsage: bad flags, files and subjects exit 2 naming the
// problem; a directory of another run needs -force.
func TestFuzzBrokerUsage(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.case")
	if err := os.WriteFile(bad, []byte("step 1 4 zz\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	full := filepath.Join(dir, "full")
	if err := os.MkdirAll(full, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(full, "x"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-canary", "nope"}, `bad -canary "nope"`},
		{[]string{"-canary", "keep-open-on-malformed", "-broker", "mosquitto"}, "-canary needs -broker ours"},
		{[]string{"-duration", "0"}, "set -duration or -execs"},
		{[]string{"-replay", filepath.Join(dir, "none.case")}, "no such file"},
		{[]string{"-replay", bad}, `line 1: bytes "zz" are not hex`},
		{[]string{"-broker", "exit 3", "-out", filepath.Join(dir, "x")}, "broker did not start"},
		{[]string{"-out", full}, "holds another run; pass -force"},
	} {
		r := simrun(t, append([]string{"fuzz-broker"}, c.args...)...)
		if r.code != exitUsage || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", c.args, r.code, r.stderr, c.want)
		}
	}
}
