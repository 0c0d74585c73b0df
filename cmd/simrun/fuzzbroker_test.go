package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/mqttlab/mqttlab/brokerfuzz"
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

// TestFuzzBrokerCanaries: each canary of our broker is caught by a short
// fuzz-broker run (seed 1, stopped at its first finding, within a budget of
// cases several times what it took when measured), by the oracle its bug
// breaks and by no oracle its bug does not explain; the case that caught it
// replays clean against our broker (exit 0) and, but for the hang (whose
// probe alone waits 8 s), trips the canary again (exit 1). The keep-open
// canary is TestFuzzBrokerSmoke's.
func TestFuzzBrokerCanaries(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		canary string
		want   string   // the oracle that must name a finding
		also   []string // the other oracles the bug explains
		execs  int      // the budget of cases
		replay bool     // the first case is replayed against the canary
	}{
		{"crash-on-publish-property", brokerfuzz.OracleCrash, nil, 400, true},
		{"hang-on-unknown-pubrel", brokerfuzz.OracleHang, nil, 200, false},
		{"ack-before-check", brokerfuzz.OracleAnswered, nil, 200, true},
		{"forward-wildcard-topic", brokerfuzz.OracleForwarded, []string{brokerfuzz.OracleAnswered, brokerfuzz.OracleLeftOpen}, 200, true},
		{"disconnect-will-reason", brokerfuzz.OracleReason, nil, 200, true},
		{"drop-puback-self-delivery", brokerfuzz.OracleUnanswered, nil, 200, true},
		// growth is judged at the end of a run: 120 cases of about four
		// connections each leak far more than its bound of 64 descriptors
		{"leak-fd-per-connection", brokerfuzz.OracleGrowth, nil, 120, false},
	} {
		t.Run(c.canary, func(t *testing.T) {
			out := filepath.Join(dir, c.canary)
			r := simrun(t, "fuzz-broker", "-canary", c.canary, "-seed", "1", "-execs", strconv.Itoa(c.execs), "-duration", "5m", "-first",
				"-shrink", "0", "-close-timeout", "1s", "-out", out).want(t, exitViolation)
			js, err := os.ReadFile(filepath.Join(out, "findings.json"))
			if err != nil {
				t.Fatal(err)
			}
			var rep brokerfuzz.Report
			if err := json.Unmarshal(js, &rep); err != nil {
				t.Fatal(err)
			}
			var caught *brokerfuzz.Finding
			for _, fd := range rep.Findings {
				for o := range fd.Oracles {
					if o != c.want && !slices.Contains(c.also, o) {
						t.Errorf("a finding the canary does not explain (%s): %s", o, fd.Key)
					}
				}
				if fd.Oracles[c.want] > 0 && caught == nil {
					caught = fd
				}
			}
			if caught == nil {
				t.Fatalf("not caught as %s in %d cases:\n%s", c.want, rep.Execs, r.stdout)
			}
			t.Logf("caught as %s at case %d after %v: %s", c.want, caught.FoundAt, caught.FoundAfter, caught.Key)
			if c.want == brokerfuzz.OracleGrowth {
				return // no case of its own: no replay file
			}
			m := regexp.MustCompile(`replay: \S+ fuzz-broker -replay (\S+)`).FindStringSubmatch(r.stdout)
			if m == nil {
				t.Fatalf("no replay file:\n%s", r.stdout)
			}
			if c.replay {
				simrun(t, "fuzz-broker", "-replay", m[1], "-canary", c.canary, "-close-timeout", "1s").want(t, exitViolation)
			}
			simrun(t, "fuzz-broker", "-replay", m[1], "-close-timeout", "1s").want(t, exitOK)
		})
	}
}
