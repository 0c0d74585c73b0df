package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// readRecorded reads a recorded `go test -fuzz` output from testdata.
func readRecorded(t *testing.T, name string) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimRight(string(data), "\n"), "\n")
}

// TestOutcomeOfRecordedRuns folds real outputs of Go's fuzzer, recorded
// from the canary target, into turn outcomes.
func TestOutcomeOfRecordedRuns(t *testing.T) {
	tests := []struct {
		file string
		want turnOutcome
	}{
		{"pass.txt", turnOutcome{execs: 159801, elapsed: 8, rate: 22545, newCov: 1, passed: true}},
		{"crash.txt", turnOutcome{execs: 65326, elapsed: 3, rate: 21772, newCov: 4, failed: true, crashers: []string{"FuzzCanary/2df6bb152fb2ac7f"}}},
		{"crash-baseline.txt", turnOutcome{failed: true, crashers: []string{"FuzzCanary/2df6bb152fb2ac7f"}}},
		{"replay-failure.txt", turnOutcome{failed: true, seedFail: "FuzzCanary/2df6bb152fb2ac7f"}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			var o turnOutcome
			lines := readRecorded(t, tt.file)
			for _, l := range lines {
				o.add(l)
			}
			if len(o.tail) != min(len(lines), tailLines) || o.tail[len(o.tail)-1] != lines[len(lines)-1] {
				t.Errorf("tail keeps %d lines ending %q", len(o.tail), o.tail[len(o.tail)-1])
			}
			o.tail = nil
			if o.execs != tt.want.execs || o.elapsed != tt.want.elapsed || o.rate != tt.want.rate || o.newCov != tt.want.newCov ||
				o.failed != tt.want.failed || o.passed != tt.want.passed || o.seedFail != tt.want.seedFail || !slices.Equal(o.crashers, tt.want.crashers) {
				t.Errorf("got %+v\nwant %+v", o, tt.want)
			}
		})
	}
}

// TestParseLine covers each line form, including longer elapsed times.
func TestParseLine(t *testing.T) {
	tests := []struct {
		line string
		want fuzzLine
	}{
		{"fuzz: elapsed: 1m0s, execs: 648582 (0/sec), new interesting: 143 (total: 185)",
			fuzzLine{kind: lineProgress, elapsed: 60, execs: 648582, newCov: 143, total: 185}},
		{"fuzz: elapsed: 1h2m3s, execs: 7 (3/sec), new interesting: 0 (total: 1)",
			fuzzLine{kind: lineProgress, elapsed: 3723, execs: 7, rate: 3, total: 1}},
		{"fuzz: elapsed: 0s, gathering baseline coverage: 30/30 completed, now fuzzing with 2 workers", fuzzLine{kind: lineBaseline}},
		{"    Failing input written to testdata/fuzz/FuzzX/ed4f037bebb3d46a", fuzzLine{kind: lineCrasher, entry: "FuzzX/ed4f037bebb3d46a"}},
		{"failure while testing seed corpus entry: FuzzX/seed#0", fuzzLine{kind: lineSeedFail, entry: "FuzzX/seed#0"}},
		{"--- FAIL: FuzzX (0.08s)", fuzzLine{kind: lineFail}},
		{"    --- FAIL: FuzzX (0.00s)", fuzzLine{kind: lineOther}},
		{"PASS", fuzzLine{kind: linePass}},
		{"ok  \tgithub.com/mqttlab/mqttlab/fuzz\t61.045s", fuzzLine{kind: linePass}},
		{"fuzz: minimizing 30-byte failing input file", fuzzLine{kind: lineOther}},
		{"fuzz: elapsed: 5x, execs: 1 (1/sec), new interesting: 0 (total: 1)", fuzzLine{kind: lineProgress, execs: 1, rate: 1, total: 1}},
	}
	for _, tt := range tests {
		if got := parseLine(tt.line); got != tt.want {
			t.Errorf("parseLine(%q) = %+v, want %+v", tt.line, got, tt.want)
		}
	}
}

// TestSchedulerRotates checks the rotation: least time first, running
// targets last, retired targets never.
func TestSchedulerRotates(t *testing.T) {
	s := newScheduler([]string{"FuzzA", "FuzzB", "FuzzC"})
	var order []string
	start := func(d time.Duration) string {
		got, ok := s.next()
		if !ok {
			t.Fatal("no target")
		}
		s.start(got, d)
		order = append(order, got)
		return got
	}
	a := start(time.Minute) // A
	b := start(time.Minute) // B (A is running)
	s.finish(a, false)
	start(time.Minute)     // C: least time and not running
	start(2 * time.Minute) // A: 1m like C, but C runs; A's 1m < B's 1m? tie broken by order, B runs
	s.finish(b, true)      // B found a crasher
	s.finish("FuzzC", false)
	s.finish("FuzzA", false)
	start(time.Minute) // C (1m) before A (3m); B retired
	if want := []string{"FuzzA", "FuzzB", "FuzzC", "FuzzA", "FuzzC"}; !slices.Equal(order, want) {
		t.Fatalf("order %v, want %v", order, want)
	}
	s.finish("FuzzC", true)
	if got, ok := s.next(); !ok || got != "FuzzA" {
		t.Fatalf("next = %q %v, want FuzzA", got, ok)
	}
	s.start("FuzzA", time.Minute)
	if got, ok := s.next(); !ok || got != "FuzzA" {
		t.Fatalf("with one target left a second turn of it runs in parallel: next = %q %v", got, ok)
	}
	s.finish("FuzzA", true)
	if s.active() {
		t.Fatal("every target is retired but the scheduler is active")
	}
}

// TestTurnLength cuts turns to the time left and refuses tiny ones.
func TestTurnLength(t *testing.T) {
	tests := []struct{ slice, left, want time.Duration }{
		{5 * time.Minute, time.Hour, 5 * time.Minute},
		{5 * time.Minute, 90*time.Second + 500*time.Millisecond, 90 * time.Second},
		{5 * time.Minute, 2 * time.Second, 2 * time.Second},
		{5 * time.Minute, 1999 * time.Millisecond, 0},
		{5 * time.Minute, -time.Second, 0},
	}
	for _, tt := range tests {
		if got := turnLength(tt.slice, tt.left); got != tt.want {
			t.Errorf("turnLength(%v, %v) = %v, want %v", tt.slice, tt.left, got, tt.want)
		}
	}
}

// TestSelectTargets lists targets and keeps the canary out unless asked;
// the pattern matches a target's label, name or package-qualified name.
func TestSelectTargets(t *testing.T) {
	names, orphans := parseList("FuzzA\nFuzzB\r\n" + canaryTarget + "\nTestNot\nok  \tex/fuzz\t0.1s\n")
	if want := []string{"FuzzA", "FuzzB", canaryTarget}; !slices.Equal(names["ex/fuzz"], want) || len(orphans) != 0 {
		t.Fatalf("parseList = %v %v, want %v", names, orphans, want)
	}
	listed := labelTargets([]pkgInfo{{importPath: "ex/fuzz", arg: "./fuzz", dir: "fuzz"}}, names)
	all := func(string) bool { return true }
	if got := labels(selectTargets(listed, all, false)); !slices.Equal(got, []string{"FuzzA", "FuzzB"}) {
		t.Errorf("without -canary: %v", got)
	}
	if got := selectTargets(listed, all, true); len(got) != 3 {
		t.Errorf("with -canary: %v", got)
	}
	if got := labels(selectTargets(listed, regexp.MustCompile("^FuzzB$").MatchString, true)); !slices.Equal(got, []string{"FuzzB"}) {
		t.Errorf("matching ^FuzzB$: %v", got)
	}
	if got := labels(selectTargets(listed, regexp.MustCompile(`^fuzz\.FuzzA$`).MatchString, true)); !slices.Equal(got, []string{"FuzzA"}) {
		t.Errorf("matching the qualified name fuzz.FuzzA: %v", got)
	}
}

// TestListAcrossPackages reads go test -list output over several packages:
// names go to the package whose line follows them, a name two packages
// share is qualified by package, names with no package line are orphans.
func TestListAcrossPackages(t *testing.T) {
	out := "FuzzA\nFuzzB\nok  \tex/fuzz\t0.2s\n?   \tex/fuzz/campaign\t[no test files]\nFuzzA\nFuzzC\nok  \tex/fuzz/codec\t(cached)\nFuzzLost\n"
	names, orphans := parseList(out)
	if !slices.Equal(orphans, []string{"FuzzLost"}) {
		t.Errorf("orphans %v, want [FuzzLost]", orphans)
	}
	pkgs := []pkgInfo{
		packageOf(".", "/m", "ex/fuzz", "/m/fuzz"),
		packageOf(".", "/m", "ex/fuzz/campaign", "/m/fuzz/campaign"),
		packageOf(".", "/m", "ex/fuzz/codec", "/m/fuzz/codec"),
	}
	var got []string
	for _, tg := range labelTargets(pkgs, names) {
		got = append(got, tg.label+" "+tg.pkg+" "+tg.dir)
	}
	want := []string{"fuzz.FuzzA ./fuzz fuzz", "FuzzB ./fuzz fuzz", "fuzz/codec.FuzzA ./fuzz/codec fuzz/codec", "FuzzC ./fuzz/codec fuzz/codec"}
	if !slices.Equal(got, want) {
		t.Errorf("targets\n%q\nwant\n%q", got, want)
	}
	for _, tt := range []struct {
		base, root, dir string
		want            pkgInfo
	}{
		{"/m", "/m", "/m", pkgInfo{importPath: "p", arg: ".", dir: "/m"}},
		{"..", "/m", "/m/a/b", pkgInfo{importPath: "p", arg: "./a/b", dir: "../a/b"}},
		{".", "/m", "/other/x", pkgInfo{importPath: "p", arg: "p", dir: "/other/x"}},
		{".", "/m", "/m2/x", pkgInfo{importPath: "p", arg: "p", dir: "/m2/x"}},
	} {
		if got := packageOf(tt.base, tt.root, "p", tt.dir); got != tt.want {
			t.Errorf("packageOf(%q, %q, %q) = %+v, want %+v", tt.base, tt.root, tt.dir, got, tt.want)
		}
	}
}

// TestFlagErrors refuses bad flags with exit status 2.
func TestFlagErrors(t *testing.T) {
	for _, args := range [][]string{
		{"-parallel", "0"}, {"-targets", "("}, {"-slice", "1s"}, {"-duration", "0s"}, {"-progress", "0s"}, {"-minimize", "-1s"}, {"extra"},
		{"-ceiling", "1s"}, {"-ceiling", "-2s", "-duration", "0s"}, {"-pkg", " , "}, {"-pkg", "./nothing/here"},
	} {
		var out, errOut bytes.Buffer
		if code := run(args, &out, &errOut, nil); code != exitUsage || errOut.Len() == 0 {
			t.Errorf("run(%q) = %d, stderr %q; want %d and a message", args, code, errOut.String(), exitUsage)
		}
	}
}

// TestTurnCommand checks the go test command of a turn and its
// environment: one worker, the cache and minimize flags, its own process
// group.
func TestTurnCommand(t *testing.T) {
	cfg, err := parseFlags([]string{"-cache", "/tmp/c", "-minimize", "5s", "-canary", "-dir", "/m"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	fx := target{name: "FuzzX", pkg: "./fuzz/codec", dir: "fuzz/codec", label: "FuzzX"}
	cmd := turnCommand(cfg, fx, 90*time.Second)
	want := []string{"go", "test", "./fuzz/codec", "-run=^$", "-fuzz=^FuzzX$", "-fuzztime=1m30s", "-parallel=1", "-fuzzminimizetime=5s", "-args", "-test.fuzzcachedir=/tmp/c"}
	if !slices.Equal(cmd.Args, want) || cmd.Dir != "/m" || !cmd.SysProcAttr.Setpgid {
		t.Fatalf("args %q dir %q setpgid %v", cmd.Args, cmd.Dir, cmd.SysProcAttr.Setpgid)
	}
	cfg, _ = parseFlags(nil, &bytes.Buffer{})
	cmd = turnCommand(cfg, fx, time.Minute)
	if slices.ContainsFunc(cmd.Args, func(a string) bool { return strings.HasPrefix(a, "-test.") || strings.HasPrefix(a, "-fuzzmin") }) {
		t.Fatalf("defaults add flags: %q", cmd.Args)
	}
}

// fakeGo writes a stand-in for the go command. go list finds two packages,
// fuzz and fuzz/codec; go test -list lists nine targets in the first and
// FuzzDelta in the second; each turn answers with a recorded output:
// FuzzAlpha, FuzzEcho, FuzzFoxtrot, FuzzHotel and FuzzIndia pass, FuzzBeta
// finds a crasher, FuzzGamma fails to build,
// FuzzSlow fuzzes until interrupted, FuzzDelta (only when run in
// ./fuzz/codec) finds a crasher. The ceiling's empty target reports 50,000
// execs/s if its throwaway module is there and its turn has the expected
// flags.
func fakeGo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	rec, err := filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}
	script := `#!/bin/sh
case "$*" in
list\ *) printf 'ex/fuzz\t%s/fuzz\nex/fuzz/codec\t%s/fuzz/codec\n' "$(pwd)" "$(pwd)" ;;
*-list*) printf 'FuzzAlpha\nFuzzBeta\nFuzzGamma\nFuzzSlow\nFuzzEcho\nFuzzFoxtrot\nFuzzHotel\nFuzzIndia\n` + canaryTarget + `\nok  \tex/fuzz\t0.1s\nFuzzDelta\nok  \tex/fuzz/codec\t0.1s\n' ;;
*FuzzAlpha*) sed s/` + canaryTarget + `/FuzzAlpha/ ` + rec + `/pass.txt ;;
*FuzzEcho*|*FuzzFoxtrot*|*FuzzHotel*|*FuzzIndia*) sed s/` + canaryTarget + `/FuzzOther/ ` + rec + `/pass.txt ;;
*FuzzBeta*) sed s/` + canaryTarget + `/FuzzBeta/ ` + rec + `/crash.txt; exit 1 ;;
*FuzzGamma*) echo "fuzz/x_test.go:3:1: syntax error"; echo "FAIL	pkg [build failed]"; exit 1 ;;
"test ./fuzz/codec "*FuzzDelta*) sed s/` + canaryTarget + `/FuzzDelta/ ` + rec + `/crash.txt; exit 1 ;;
*FuzzDelta*) echo "FuzzDelta run in the wrong package: $*"; exit 1 ;;
*` + ceilingTarget + `*)
	grep -q 'func ` + ceilingTarget + `(f \*testing.F) {' ceiling_test.go && grep -q '^module ' go.mod || { echo "no ceiling module in $(pwd)"; exit 1; }
	case "$*" in
	"test . -run=^$ -fuzz=^` + ceilingTarget + `$ -fuzztime=2s -parallel=1 -args -test.fuzzcachedir=$(pwd)/cache") ;;
	*) echo "unexpected ceiling turn: $*"; exit 1 ;;
	esac
	echo "fuzz: elapsed: 4s, execs: 200000 (50000/sec), new interesting: 0 (total: 1)"; echo PASS ;;
*FuzzSlow*)
	sleep 600 </dev/null >/dev/null 2>&1 &
	pid=$!
	trap 'kill $pid; echo PASS; exit 0' INT
	: > "$(dirname "$0")/slow-ready"
	echo "fuzz: elapsed: 3s, execs: 300 (100/sec), new interesting: 1 (total: 2)"
	wait $pid ;;
esac
`
	path := filepath.Join(dir, "go")
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// syncBuffer is a bytes.Buffer safe for a reader in another goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestCampaignLoop runs the loop against the fake go: the crasher is
// reported with its command and its target retired, the build failure is
// reported, and the exit status is 1. The three targets run at once, so
// each one's first turn starts with the campaign: with two at once
// FuzzGamma waited for a slot, and turns start only while 2 s of the 3 s are
// left, so on a loaded machine whose first turns took over a second
// FuzzGamma never ran. A free slot may give a target still running a second
// turn at once (the scheduler's rule); retired means no turn starts after
// its first turn ended.
func TestCampaignLoop(t *testing.T) {
	s := runFakeFound(t, "Alpha|Beta|Gamma", "3",
		"CRASHER FuzzBeta/2df6bb152fb2ac7f (new crasher, minimized and saved): fuzz/testdata/fuzz/FuzzBeta/2df6bb152fb2ac7f",
		"reproduce: go test ./fuzz -run='^FuzzBeta/2df6bb152fb2ac7f$'",
		"FAILED FuzzGamma: go test failed",
		"syntax error",
	)
	for _, c := range []struct{ target, why string }{{"FuzzBeta", "a target with a crasher"}, {"FuzzGamma", "a failing target"}} {
		end := strings.Index(s, "end "+c.target+": ")
		if end < 0 {
			t.Errorf("no turn of %s ended:\n%s", c.target, s)
		} else if strings.Contains(s[end:], "start "+c.target+" ") {
			t.Errorf("%s got a turn after its first turn ended; %s must get no more:\n%s", c.target, c.why, s)
		}
	}
	if strings.Contains(s, canaryTarget) {
		t.Errorf("the canary ran without -canary:\n%s", s)
	}
}

// runFakeFound runs a 3 s campaign of the targets matching pattern against
// the fake go (turns of 2 s, parallel at once), which must exit 1 (found)
// with every one of wants in its output; it returns the output.
func runFakeFound(t *testing.T, pattern, parallel string, wants ...string) string {
	t.Helper()
	var out, errOut bytes.Buffer
	args := []string{"-go", fakeGo(t), "-targets", pattern, "-duration", "3s", "-slice", "2s", "-parallel", parallel}
	code := run(args, &out, &errOut, nil)
	s := out.String()
	if code != exitFound {
		t.Fatalf("exit %d, want %d\n%s%s", code, exitFound, s, errOut.String())
	}
	for _, want := range wants {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %q:\n%s", want, s)
		}
	}
	return s
}

// TestCampaignAcrossPackages runs targets of two packages: each turn runs
// in its own package, and a crasher is reported under that package's
// testdata with the command that replays it there.
func TestCampaignAcrossPackages(t *testing.T) {
	s := runFakeFound(t, "Alpha|codec", "2",
		"campaign: ./fuzz/... for 3s, turns of 2s, 2 at once: FuzzAlpha FuzzDelta",
		"CRASHER FuzzDelta/2df6bb152fb2ac7f (new crasher, minimized and saved): "+filepath.Join("fuzz", "codec", "testdata", "fuzz", "FuzzDelta", "2df6bb152fb2ac7f"),
		"reproduce: go test ./fuzz/codec -run='^FuzzDelta/2df6bb152fb2ac7f$'",
		"end FuzzAlpha: ok",
	)
	if strings.Contains(s, "FAILED") {
		t.Errorf("a turn failed (run in the wrong package?):\n%s", s)
	}
}

// TestCampaignCeiling measures the ceiling with the fake go before the
// campaign and prints each target's share of it; with -duration 0 only the
// ceiling runs.
func TestCampaignCeiling(t *testing.T) {
	goCmd := fakeGo(t)
	var out, errOut bytes.Buffer
	code := run([]string{"-go", goCmd, "-ceiling", "2s", "-targets", "Alpha", "-duration", "3s", "-parallel", "1"}, &out, &errOut, nil)
	s := out.String()
	if code != exitOK {
		t.Fatalf("exit %d, want %d\n%s%s", code, exitOK, s, errOut.String())
	}
	// FuzzAlpha's recorded turn (the fake answers at once, so it gets many):
	// 159801 execs in 8 s = 19975/s, 39% of 50000.
	row := regexp.MustCompile(`(?m)^\s*FuzzAlpha\s+\d+\s+\d+\s+\d+\s+19975\s+22545\s+\d+\s+39%$`)
	if !strings.Contains(s, "ceiling: 50000 execs/s per turn (an empty target, 1 turn(s) at once, one worker each)") || !row.MatchString(s) {
		t.Errorf("no ceiling line or no FuzzAlpha row at 39%% of it:\n%s", s)
	}
	if strings.Index(s, "ceiling: 50000") > strings.Index(s, "start FuzzAlpha") {
		t.Errorf("the ceiling was not measured before the campaign:\n%s", s)
	}
	out.Reset()
	code = run([]string{"-go", goCmd, "-ceiling", "2s", "-duration", "0", "-parallel", "2"}, &out, &errOut, nil)
	s = out.String()
	if code != exitOK || !strings.Contains(s, "ceiling: 50000 execs/s per turn (400000 execs in 2 turn(s) of 8s in all)") || strings.Contains(s, "campaign") {
		t.Errorf("ceiling only: exit %d, output:\n%s%s", code, s, errOut.String())
	}
}

// TestCeilingEndToEnd runs Go's fuzzer on the throwaway module for 2 s: it
// must build, fuzz, and report a rate.
func TestCeilingEndToEnd(t *testing.T) {
	var out, errOut bytes.Buffer
	code := run([]string{"-ceiling", "2s", "-duration", "0", "-parallel", "1"}, &out, &errOut, nil)
	s := out.String()
	m := regexp.MustCompile(`ceiling: (\d+) execs/s per turn`).FindStringSubmatch(s)
	if code != exitOK || m == nil || m[1] == "0" {
		t.Fatalf("exit %d, want a measured ceiling:\n%s%s", code, s, errOut.String())
	}
}

// TestCampaignInterrupt forwards Ctrl-C to a running turn, which stops
// cleanly; the summary is printed and the exit status is 130.
func TestCampaignInterrupt(t *testing.T) {
	var out syncBuffer
	var errOut bytes.Buffer
	sigs := make(chan os.Signal, 1)
	done := make(chan int)
	goCmd := fakeGo(t)
	// The fake turn writes slow-ready once its INT trap is set: a signal
	// sent before that would kill the shell instead of stopping the turn.
	ready := filepath.Join(filepath.Dir(goCmd), "slow-ready")
	go func() {
		done <- run([]string{"-go", goCmd, "-targets", "Slow", "-duration", "1h", "-parallel", "1", "-progress", "1h"}, &out, &errOut, sigs)
	}()
	for _, err := os.Stat(ready); !strings.Contains(out.String(), "start FuzzSlow") || err != nil; _, err = os.Stat(ready) {
		select {
		case code := <-done:
			t.Fatalf("campaign ended early with %d:\n%s%s", code, out.String(), errOut.String())
		default:
			time.Sleep(10 * time.Millisecond)
		}
	}
	sigs <- os.Interrupt
	code := <-done
	s := out.String()
	if code != exitInterrupted || !strings.Contains(s, "interrupted: stopping 1 turn(s)") || !strings.Contains(s, "campaign summary") || !strings.Contains(s, "end FuzzSlow: ok") {
		t.Fatalf("exit %d, output:\n%s", code, s)
	}
}

// TestCampaignCanaryEndToEnd runs the real campaign on the canary target in
// a copy of the module (so `go test ./...` of the real tree, which may run at
// the same time, never sees the crasher): it must report and save a crasher
// within 40 s (seconds on an idle machine; the campaign ends as soon as its
// only target has one, so the margin only matters on a loaded machine), and
// plain `go test ./fuzz` must then fail on it, and pass again once the file
// is gone. The targets are found across ./fuzz/..., as by default.
func TestCampaignCanaryEndToEnd(t *testing.T) {
	root := copyModule(t, filepath.Join("..", ".."))
	corpus := filepath.Join(root, "fuzz", "testdata", "fuzz", canaryTarget)
	before, _ := os.ReadDir(corpus)
	cache := t.TempDir()
	var out, errOut bytes.Buffer
	code := run([]string{"-canary", "-targets", "^" + canaryTarget + "$", "-duration", "40s", "-parallel", "1",
		"-dir", root, "-cache", cache}, &out, &errOut, nil)
	s := out.String()
	if code != exitFound || !strings.Contains(s, "CRASHER "+canaryTarget+"/") || !strings.Contains(s, "reproduce: go test ./fuzz -run='^"+canaryTarget+"/") {
		t.Fatalf("exit %d, want a reported crasher:\n%s%s", code, s, errOut.String())
	}
	added := newFiles(t, corpus, before)
	if len(added) != 1 {
		t.Fatalf("the campaign saved %v in %s, want one crasher file", added, corpus)
	}
	if !strings.Contains(s, filepath.Join("fuzz", "testdata", "fuzz", canaryTarget, added[0])) {
		t.Errorf("the report does not name the saved file %s:\n%s", added[0], s)
	}
	if ents, err := os.ReadDir(filepath.Join(cache, canaryTarget)); err != nil || len(ents) == 0 {
		t.Errorf("-cache %s holds no generated corpus: %v", cache, err)
	}
	replay := func() (string, error) {
		cmd := exec.Command("go", "test", "./fuzz", "-count=1")
		cmd.Dir = root
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := replay(); err == nil || !strings.Contains(out, added[0]) {
		t.Errorf("go test ./fuzz does not fail on the saved crasher %s (err %v):\n%s", added[0], err, out)
	}
	removeNew(t, corpus, before)
	if out, err := replay(); err != nil {
		t.Errorf("go test ./fuzz fails without the crasher: %v\n%s", err, out)
	}
}

// copyModule copies the module at src (every file with its permissions;
// not .git, out, docs or test binaries) into a temporary directory and returns it.
func copyModule(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		if d.IsDir() {
			if rel == ".git" || rel == "out" || rel == "docs" {
				return filepath.SkipDir
			}
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		if !d.Type().IsRegular() || strings.HasSuffix(path, ".test") {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, info.Mode().Perm())
	})
	if err != nil {
		t.Fatalf("copy module: %v", err)
	}
	return dst
}

// newFiles lists the files in dir that were not in before.
func newFiles(t *testing.T, dir string, before []os.DirEntry) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var added []string
	for _, e := range ents {
		if !slices.ContainsFunc(before, func(b os.DirEntry) bool { return b.Name() == e.Name() }) {
			added = append(added, e.Name())
		}
	}
	return added
}

// removeNew deletes the files the test added to dir.
func removeNew(t *testing.T, dir string, before []os.DirEntry) {
	for _, name := range newFiles(t, dir, before) {
		if err := os.Remove(filepath.Join(dir, name)); err != nil {
			t.Error(err)
		}
	}
}

// TestOutcomeKeepsLastNonZeroRate ignores the 0/sec of a turn's final line.
func TestOutcomeKeepsLastNonZeroRate(t *testing.T) {
	var o turnOutcome
	o.add("fuzz: elapsed: 3s, execs: 300 (100/sec), new interesting: 1 (total: 2)")
	o.add("fuzz: elapsed: 4s, execs: 300 (0/sec), new interesting: 1 (total: 2)")
	if o.rate != 100 || o.elapsed != 4 || o.execs != 300 {
		t.Fatalf("outcome %+v, want rate 100 after 4s", o)
	}
}

// TestPlanTurns splits short durations into equal shares unless -slice was
// given, and counts the targets a duration reaches.
func TestPlanTurns(t *testing.T) {
	const m = time.Minute
	tests := []struct {
		name        string
		duration    time.Duration
		slice       time.Duration
		sliceSet    bool
		parallel, n int
		want        turnPlan
	}{
		{"long: default turns", time.Hour, 5 * m, false, 2, 5, turnPlan{slice: 5 * m, reached: 5}},
		{"exactly one round each", 15 * m, 5 * m, false, 2, 5, turnPlan{slice: 5 * m, reached: 5}},
		{"20s, 5 targets, 2 at once: 3 rounds of 6s", 20 * time.Second, 5 * m, false, 2, 5, turnPlan{slice: 6 * time.Second, oneEach: true, reached: 5}},
		{"12m: 3 rounds of 4m", 12 * m, 5 * m, false, 2, 5, turnPlan{slice: 4 * m, oneEach: true, reached: 5}},
		{"one target gets the whole duration", 40 * time.Second, 5 * m, false, 1, 1, turnPlan{slice: 40 * time.Second, oneEach: true, reached: 1}},
		{"share below the floor: turns of minShare", 12 * time.Second, 5 * m, false, 1, 5, turnPlan{slice: minShare, reached: 3}},
		{"an explicit -slice is kept", 20 * time.Second, 10 * time.Second, true, 2, 5, turnPlan{slice: 10 * time.Second, reached: 4}},
		{"an explicit -slice, a cut last turn", 25 * time.Second, 10 * time.Second, true, 1, 5, turnPlan{slice: 10 * time.Second, reached: 3}},
		{"an explicit -slice, a remainder too short", 21 * time.Second, 10 * time.Second, true, 1, 5, turnPlan{slice: 10 * time.Second, reached: 2}},
	}
	for _, tt := range tests {
		if got := planTurns(tt.duration, tt.slice, tt.sliceSet, tt.parallel, tt.n); got != tt.want {
			t.Errorf("%s: planTurns(%v, %v, %v, %d, %d) = %+v, want %+v", tt.name, tt.duration, tt.slice, tt.sliceSet, tt.parallel, tt.n, got, tt.want)
		}
	}
}

// TestShortCampaignEqualShares runs the case against the fake go:
// -duration 20s over five targets, two at once, gives each target exactly
// one turn of 6 s, says so, and warns of nothing.
func TestShortCampaignEqualShares(t *testing.T) {
	var out, errOut bytes.Buffer
	code := run([]string{"-go", fakeGo(t), "-targets", "Alpha|Echo|Foxtrot|Hotel|India", "-duration", "20s", "-parallel", "2"}, &out, &errOut, nil)
	s := out.String()
	if code != exitOK {
		t.Fatalf("exit %d, want %d\n%s%s", code, exitOK, s, errOut.String())
	}
	for _, name := range []string{"FuzzAlpha", "FuzzEcho", "FuzzFoxtrot", "FuzzHotel", "FuzzIndia"} {
		if n := strings.Count(s, "start "+name+" for 6s\n"); n != 1 {
			t.Errorf("%s got %d turns of 6s, want 1", name, n)
		}
	}
	if n := strings.Count(s, " start "); n != 5 {
		t.Errorf("%d turns, want 5:\n%s", n, s)
	}
	if !strings.Contains(s, "each of the 5 targets gets one turn of 6s") || strings.Contains(errOut.String(), "warning") {
		t.Errorf("no equal-share line, or a warning:\n%s%s", s, errOut.String())
	}
}

// TestShortCampaignWarns warns, naming the targets left out, when an
// explicit -slice or the share's floor cannot give every target a turn.
func TestShortCampaignWarns(t *testing.T) {
	var targets []target
	for _, name := range []string{"FuzzA", "FuzzB", "FuzzC", "FuzzD", "FuzzE"} {
		targets = append(targets, target{name: name, pkg: "./fuzz", label: name})
	}
	cfg := config{duration: 20 * time.Second, slice: 10 * time.Second, sliceSet: true, parallel: 2}
	var errOut bytes.Buffer
	warnUnreached(&errOut, cfg, planTurns(cfg.duration, cfg.slice, cfg.sliceSet, cfg.parallel, len(targets)), targets)
	want := "campaign: warning: -duration 20s in turns of 10s, 2 at once, gives only 4 of 5 targets a turn; no turn for: FuzzE (every target needs -duration 30s or a shorter -slice)\n"
	if errOut.String() != want {
		t.Errorf("warning\n%q\nwant\n%q", errOut.String(), want)
	}
	errOut.Reset()
	cfg = config{duration: 12 * time.Second, slice: 5 * time.Minute, parallel: 1}
	warnUnreached(&errOut, cfg, planTurns(cfg.duration, cfg.slice, cfg.sliceSet, cfg.parallel, len(targets)), targets)
	if !strings.Contains(errOut.String(), "gives only 3 of 5 targets a turn; no turn for: FuzzD FuzzE (every target needs -duration 25s") {
		t.Errorf("below the floor: %q", errOut.String())
	}
	errOut.Reset()
	cfg.duration = time.Hour
	warnUnreached(&errOut, cfg, planTurns(cfg.duration, cfg.slice, cfg.sliceSet, cfg.parallel, len(targets)), targets)
	if errOut.Len() != 0 {
		t.Errorf("an hour warns: %q", errOut.String())
	}
}
