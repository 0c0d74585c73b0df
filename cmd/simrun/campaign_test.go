package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestCampaignFixedPasses: the fixed preset keeps every promise on a few
// seeds: exit 0, one result line per seed, no plan saved.
func TestCampaignFixedPasses(t *testing.T) {
	dir := t.TempDir()
	r := simrun(t, "campaign", "-seeds", "10", "-start", "100", "-out", dir).want(t, exitOK)
	recs := readRecords(t, dir)
	if len(recs) != 10 {
		t.Fatalf("%d records, want 10", len(recs))
	}
	for _, rec := range recs {
		if rec.Seed < 100 || rec.Seed >= 110 || rec.failed() || rec.Preset != "fixed" || rec.Stats.Published == 0 {
			t.Errorf("record %+v", rec)
		}
	}
	if plans, _ := filepath.Glob(filepath.Join(dir, "seed-*.plan")); len(plans) != 0 {
		t.Errorf("plans saved for a passing campaign: %v", plans)
	}
	if !strings.Contains(r.stdout, "10 seeds (100..109), 0 failing") || !strings.Contains(r.stdout, "violations: none") {
		t.Errorf("summary:\n%s", r.stdout)
	}
	if strings.ContainsAny(r.stdout+r.stderr, "\r\x1b") {
		t.Errorf("progress bar drawn on a non-terminal:\n%q", r.stdout)
	}
}

// TestCampaignLegacyReplays: legacy fails; every failing seed's plan is saved
// and its printed replay command reproduces the checksum and names the same
// invariant, exiting 1.
func TestCampaignLegacyReplays(t *testing.T) {
	dir := t.TempDir()
	r := simrun(t, "campaign", "-seeds", "8", "-preset", "legacy", "-out", dir).want(t, exitViolation)
	failing := 0
	for _, rec := range readRecords(t, dir) {
		if !rec.failed() {
			continue
		}
		failing++
		cmd := rec.replayCommand()
		if !strings.Contains(r.stdout, "  "+cmd+"\n") || !strings.Contains(fileText(t, filepath.Join(dir, "failing.txt")), cmd) {
			t.Errorf("replay command %q not printed", cmd)
		}
		args := strings.Fields(strings.TrimPrefix(cmd, replayPrefix+" "))
		s := summaryJSON(t, exitViolation, args...)
		if s.Checksum != rec.Checksum {
			t.Errorf("seed %d: replay checksum %s, campaign %s", rec.Seed, s.Checksum, rec.Checksum)
		}
		if len(s.Violations) == 0 || s.Violations[0].Invariant != rec.First.Invariant || s.Violations[0].Reason != rec.First.Reason {
			t.Errorf("seed %d: replay found %+v, campaign %+v", rec.Seed, s.Violations, rec.First)
		}
	}
	if failing == 0 {
		t.Fatalf("no legacy seed failed:\n%s", r.stdout)
	}
	if !strings.Contains(r.stdout, "violations by invariant") {
		t.Errorf("no invariant table:\n%s", r.stdout)
	}
}

// TestCampaignIndependentOfWorkers: the summary is the same with one worker
// and with three.
func TestCampaignIndependentOfWorkers(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	ra := simrun(t, "campaign", "-shrink", "0", "-seeds", "9", "-preset", "legacy-pubrel", "-workers", "1", "-out", a)
	rb := simrun(t, "campaign", "-shrink", "0", "-seeds", "9", "-preset", "legacy-pubrel", "-workers", "3", "-out", b)
	if ra.code != rb.code {
		t.Errorf("exit %d with 1 worker, %d with 3", ra.code, rb.code)
	}
	if x, y := fileText(t, filepath.Join(a, "summary.txt")), fileText(t, filepath.Join(b, "summary.txt")); x != y {
		t.Errorf("summaries differ:\n%s\n---\n%s", x, y)
	}
}

// TestShardsMerge: two shards merged print the unsharded summary, and a
// shard holds only its seeds.
func TestShardsMerge(t *testing.T) {
	root := t.TempDir()
	whole := simrun(t, "campaign", "-shrink", "0", "-seeds", "10", "-start", "3", "-preset", "legacy", "-out", filepath.Join(root, "whole"))
	s0 := simrun(t, "campaign", "-shrink", "0", "-seeds", "10", "-start", "3", "-preset", "legacy", "-shard", "0/2", "-out", filepath.Join(root, "s0"))
	simrun(t, "campaign", "-shrink", "0", "-seeds", "10", "-start", "3", "-preset", "legacy", "-shard", "1/2", "-out", filepath.Join(root, "s1"))
	for _, rec := range readRecords(t, filepath.Join(root, "s0")) {
		if (rec.Seed-3)%2 != 0 {
			t.Errorf("shard 0/2 ran seed %d", rec.Seed)
		}
	}
	if campaignBlock(t, s0.stdout) == campaignBlock(t, whole.stdout) {
		t.Fatal("a single shard already prints the whole summary: the comparison below proves nothing")
	}
	merged := simrun(t, "merge", filepath.Join(root, "s0"), filepath.Join(root, "s1")).want(t, whole.code)
	if got, want := campaignBlock(t, merged.stdout), campaignBlock(t, whole.stdout); got != want {
		t.Errorf("merged summary:\n%s\nunsharded:\n%s", got, want)
	}
	if got := campaignBlock(t, merged.stdout); got != fileText(t, filepath.Join(root, "whole", "summary.txt")) {
		t.Errorf("summary.txt differs from the printed summary")
	}
	if !strings.Contains(merged.stdout, "replay "+filepath.Join(root, "s")) {
		t.Errorf("merge does not point at the shards' plans:\n%s", merged.stdout)
	}
}

// TestShardDefaultOut: without -out a campaign writes to a directory named
// after its world, a shard under it in shard-i-of-n.
func TestShardDefaultOut(t *testing.T) {
	var c campaign
	c.count, c.workers = 4, 1
	if err := c.validate(worldFlags{profile: "swarm", preset: "fixed", scenario: "standard", version: "5", judge: "spec"}, "1/3", false); err != nil {
		t.Fatal(err)
	}
	if c.out != filepath.Join("out", "campaign-fixed-swarm-standard-v5-spec", "shard-1-of-3") {
		t.Errorf("out %q", c.out)
	}
	var d campaign
	d.count, d.workers = 4, 1
	if err := d.validate(worldFlags{profile: "crashy", preset: "legacy", scenario: "small", version: "3", judge: "preset"}, "0/1", false); err != nil {
		t.Fatal(err)
	}
	if d.out != filepath.Join("out", "campaign-legacy-crashy-small-v3.1.1-preset") {
		t.Errorf("out %q", d.out)
	}
	if got := c.todo(nil); len(got) != 1 || got[0] != 1 {
		t.Errorf("shard 1/3 of seeds 0..3: %v", got)
	}
}

// TestMergeRejectsNondeterminism: the same seed with two checksums is an
// error, not a silent pick.
func TestMergeRejectsNondeterminism(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	simrun(t, "campaign", "-seeds", "2", "-out", a).want(t, exitOK)
	simrun(t, "campaign", "-seeds", "2", "-out", b).want(t, exitOK)
	if r := simrun(t, "merge", a, b).want(t, exitUsage); !strings.Contains(r.stderr, "shard 0/1 is given 2 times") {
		t.Errorf("the same campaign twice: stderr %q", r.stderr)
	}
	text := fileText(t, filepath.Join(b, resultsFile))
	recs := readRecords(t, b)
	text = strings.Replace(text, `"checksum":"`+recs[0].Checksum, `"checksum":"0000000000000000`, 1)
	writeFile(t, b, resultsFile, text)
	r := simrun(t, "merge", a, b).want(t, exitUsage)
	if !strings.Contains(r.stderr, "not deterministic") {
		t.Errorf("stderr %q", r.stderr)
	}
}

// TestResumeAfterTruncation: a results.jsonl cut mid-line (a killed
// campaign) resumes: the finished seeds are kept, not rerun, the cut one and
// the rest run, and the summary is the uninterrupted one.
func TestResumeAfterTruncation(t *testing.T) {
	full, cut := t.TempDir(), t.TempDir()
	want := simrun(t, "campaign", "-shrink", "0", "-seeds", "10", "-preset", "legacy", "-out", full)
	args := []string{"campaign", "-shrink", "0", "-seeds", "10", "-preset", "legacy", "-out", cut}
	simrun(t, args...)
	lines := strings.SplitAfter(fileText(t, filepath.Join(cut, resultsFile)), "\n")
	kept := strings.Join(lines[:4], "")
	writeFile(t, cut, resultsFile, kept+lines[4][:len(lines[4])/2])
	r := simrun(t, append(args, "-resume")...).want(t, want.code)
	if !strings.Contains(r.stdout, "6 to run, 4 already done") || !strings.Contains(r.stderr, "dropped 1 unreadable line") {
		t.Errorf("resume did not skip the 4 done seeds:\n%s\n%s", r.stdout, r.stderr)
	}
	after := fileText(t, filepath.Join(cut, resultsFile))
	if !strings.HasPrefix(after, kept) {
		t.Errorf("the finished lines were rewritten")
	}
	if n := len(readRecords(t, cut)); n != 10 {
		t.Errorf("%d records after resume, want 10", n)
	}
	if got, w := campaignBlock(t, r.stdout), campaignBlock(t, want.stdout); got != w {
		t.Errorf("resumed summary:\n%s\nuninterrupted:\n%s", got, w)
	}
	again := simrun(t, append(args, "-resume")...).want(t, want.code)
	if !strings.Contains(again.stdout, "0 to run, 10 already done") {
		t.Errorf("a finished campaign resumed ran seeds again:\n%s", again.stdout)
	}
}

// TestResumeRejectsOtherWorld: -resume on a directory of another preset is
// a usage error.
func TestResumeRejectsOtherWorld(t *testing.T) {
	dir := t.TempDir()
	simrun(t, "campaign", "-seeds", "2", "-out", dir).want(t, exitOK)
	r := simrun(t, "campaign", "-seeds", "2", "-preset", "legacy", "-out", dir, "-resume").want(t, exitUsage)
	if !strings.Contains(r.stderr, "-resume: "+dir+" holds the campaign preset fixed") {
		t.Errorf("stderr %q", r.stderr)
	}
}

// TestInterruptedCampaign: a cancelled campaign (what SIGINT does) stops
// dispatching, keeps what finished, prints the summary so far and the
// -resume command, and exits 130; resuming finishes the rest.
func TestInterruptedCampaign(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errb bytes.Buffer
	e := &env{stdout: &out, stderr: &errb, ctx: ctx,
		afterResult: func(done int) {
			if done == 3 {
				cancel()
			}
		}}
	args := []string{"campaign", "-seeds", "40", "-workers", "2", "-out", dir}
	if code := e.run(args); code != exitInterrupted {
		t.Fatalf("exit %d, want %d\n%s\n%s", code, exitInterrupted, out.String(), errb.String())
	}
	n := len(readRecords(t, dir))
	if n < 3 || n >= 40 {
		t.Errorf("%d seeds recorded after an interrupt at 3 of 40", n)
	}
	resume := replayPrefix + " campaign -seeds 40 -workers 2 -out " + dir + " -resume"
	if !strings.Contains(out.String(), resume) || !strings.Contains(out.String(), "== campaign summary ==") {
		t.Errorf("no summary or resume command %q:\n%s", resume, out.String())
	}
	r := simrun(t, strings.Fields(strings.TrimPrefix(resume, replayPrefix+" "))...).want(t, exitOK)
	if len(readRecords(t, dir)) != 40 || !strings.Contains(r.stdout, "40 seeds (0..39)") {
		t.Errorf("resume did not finish:\n%s", r.stdout)
	}
}

// TestFreshCampaignClearsOldFiles: another campaign's results in the
// directory are refused (exit 2, naming the directory and both campaigns)
// unless -force, which removes its results and plans first; the same
// campaign run again replaces its own.
func TestFreshCampaignClearsOldFiles(t *testing.T) {
	dir := t.TempDir()
	simrun(t, "campaign", "-shrink", "0", "-seeds", "4", "-preset", "legacy", "-out", dir).want(t, exitViolation)
	simrun(t, "campaign", "-shrink", "0", "-seeds", "4", "-preset", "legacy", "-out", dir).want(t, exitViolation)
	for _, args := range [][]string{{"-seeds", "3"}, {"-seeds", "3", "-preset", "legacy"}} {
		r := simrun(t, append([]string{"campaign", "-out", dir}, args...)...).want(t, exitUsage)
		if !strings.Contains(r.stderr, dir+" holds 4 result(s) of the campaign preset legacy") || !strings.Contains(r.stderr, "-force") {
			t.Errorf("%v: stderr %q", args, r.stderr)
		}
	}
	if n := len(readRecords(t, dir)); n != 4 {
		t.Fatalf("the refused campaign changed the results: %d records", n)
	}
	simrun(t, "campaign", "-seeds", "3", "-out", dir, "-force").want(t, exitOK)
	if plans, _ := filepath.Glob(filepath.Join(dir, "seed-*.plan")); len(plans) != 0 {
		t.Errorf("stale plans kept: %v", plans)
	}
	if n := len(readRecords(t, dir)); n != 3 {
		t.Errorf("%d records, want 3", n)
	}
	if _, err := os.Stat(filepath.Join(dir, "summary.txt")); err != nil {
		t.Error(err)
	}
}

// TestResumeAfterLineWithoutNewline: a results.jsonl whose last record is
// complete but lacks its newline resumes onto a line of its own: every
// record stays readable and merge accepts the directory.
func TestResumeAfterLineWithoutNewline(t *testing.T) {
	dir := t.TempDir()
	args := []string{"campaign", "-seeds", "6", "-out", dir}
	simrun(t, args...).want(t, exitOK)
	lines := strings.SplitAfter(fileText(t, filepath.Join(dir, resultsFile)), "\n")
	writeFile(t, dir, resultsFile, strings.Join(lines[:2], "")+strings.TrimSuffix(lines[2], "\n"))
	r := simrun(t, append(args, "-resume")...).want(t, exitOK)
	if !strings.Contains(r.stdout, "3 to run, 3 already done") {
		t.Errorf("resume:\n%s\n%s", r.stdout, r.stderr)
	}
	if n := len(readRecords(t, dir)); n != 6 {
		t.Errorf("%d readable records after resume, want 6", n)
	}
	simrun(t, "merge", dir).want(t, exitOK)
}

// TestProgressLinesOffTerminal: with stdout not a terminal, a campaign
// prints progress lines to stderr (seeds done, failing, seeds/s, time
// left), never a bar's control characters, and its stdout stays the summary.
func TestProgressLinesOffTerminal(t *testing.T) {
	var out, errb bytes.Buffer
	e := &env{stdout: &out, stderr: &errb, ctx: context.Background(), progressEvery: time.Nanosecond}
	if code := e.run([]string{"campaign", "-seeds", "6", "-preset", "legacy", "-workers", "1", "-out", t.TempDir()}); code != exitViolation {
		t.Fatalf("exit %d\n%s%s", code, out.String(), errb.String())
	}
	lines := strings.Split(strings.TrimSuffix(errb.String(), "\n"), "\n")
	if len(lines) != 5 {
		t.Fatalf("%d progress lines for 6 seeds, want 5 (one a seed but the last):\n%s", len(lines), errb.String())
	}
	pat := regexp.MustCompile(`^campaign: [1-5]/6 seeds done, [0-5] failing, [0-9.]+ seeds/s, about [0-9a-z.]+ left$`)
	for _, l := range lines {
		if !pat.MatchString(l) {
			t.Errorf("progress line %q", l)
		}
	}
	if strings.ContainsAny(out.String()+errb.String(), "\r\x1b") || strings.Contains(out.String(), "seeds done") {
		t.Errorf("bar drawn, or progress on stdout:\n%q", out.String())
	}
}
