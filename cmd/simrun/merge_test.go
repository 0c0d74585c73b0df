package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// mergeShards runs seeds 10..49 of the default world as shards 0/2 and 1/2
// into root/s0 and root/s1 and returns the two directories.
func mergeShards(t *testing.T, root string) (s0, s1 string) {
	t.Helper()
	s0, s1 = filepath.Join(root, "s0"), filepath.Join(root, "s1")
	simrun(t, "campaign", "-seeds", "40", "-start", "10", "-shard", "0/2", "-out", s0).want(t, exitOK)
	simrun(t, "campaign", "-seeds", "40", "-start", "10", "-shard", "1/2", "-out", s1).want(t, exitOK)
	return s0, s1
}

// TestMergeRefusesIncompleteCampaigns: merge sums only the shards of one
// campaign that hold each of its seeds exactly once. An interrupted shard,
// a shard cut short at a line boundary, the same directory twice, an empty
// results.jsonl, a missing shard and shards of different presets all exit 2
// with no summary on stdout (never a "violations: none" headline) and a
// message naming the seeds missing or repeated.
func TestMergeRefusesIncompleteCampaigns(t *testing.T) {
	root := t.TempDir()
	s0, s1 := mergeShards(t, root)
	whole := simrun(t, "merge", s0, s1).want(t, exitOK)
	if !strings.Contains(whole.stdout, "violations: none") || !strings.Contains(whole.stdout, "40 seeds (10..49)") {
		t.Fatalf("whole campaign:\n%s", whole.stdout)
	}

	interrupted := filepath.Join(root, "interrupted")
	interruptShard(t, interrupted, 5)
	cut := filepath.Join(root, "cut")
	simrun(t, "campaign", "-seeds", "40", "-start", "10", "-shard", "1/2", "-workers", "1", "-out", cut).want(t, exitOK)
	lines := strings.SplitAfter(fileText(t, filepath.Join(cut, resultsFile)), "\n")
	writeFile(t, cut, resultsFile, strings.Join(lines[:6], ""))
	empty := filepath.Join(root, "empty")
	simrun(t, "campaign", "-seeds", "40", "-start", "10", "-shard", "1/2", "-out", empty).want(t, exitOK)
	writeFile(t, empty, resultsFile, "")
	legacy := filepath.Join(root, "legacy")
	simrun(t, "campaign", "-shrink", "0", "-seeds", "40", "-start", "10", "-shard", "1/2", "-preset", "legacy", "-out", legacy)

	cases := []struct {
		name string
		dirs []string
		want []string
	}{
		{"interrupted shard", []string{s0, interrupted}, []string{"missing: ", "holds ", "of its shard's 20 seeds; finish it with: " + replayPrefix + " campaign ", " -resume"}},
		{"cut shard", []string{s0, cut}, []string{"14 of 40 seeds missing: 23..49 step 2", cut + " holds 6 of its shard's 20 seeds"}},
		{"same dir twice", []string{s0, s1, s0}, []string{"given twice"}},
		{"empty results", []string{s0, empty}, []string{"20 of 40 seeds missing: 11..49 step 2"}},
		{"missing shard", []string{s0}, []string{"no directory of shard 1/2"}},
		{"different presets", []string{s0, legacy}, []string{"not shards of one campaign", "preset fixed", "preset legacy"}},
		{"same shard twice", []string{s0, s1, cut}, []string{"shard 1/2 is given 2 times", "6 seed(s) held more than once: 11..21 step 2"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := simrun(t, append([]string{"merge"}, c.dirs...)...).want(t, exitUsage)
			if r.stdout != "" {
				t.Errorf("a summary printed over an incomplete campaign:\n%s", r.stdout)
			}
			for _, w := range c.want {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, r.stderr)
				}
			}
		})
	}
}

// interruptShard runs shard 1/2 of seeds 10..49 into dir and cancels it
// (as SIGINT does) after n results.
func interruptShard(t *testing.T, dir string, n int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errb bytes.Buffer
	e := &env{stdout: &out, stderr: &errb, ctx: ctx, afterResult: func(done int) {
		if done == n {
			cancel()
		}
	}}
	if code := e.run([]string{"campaign", "-seeds", "40", "-start", "10", "-shard", "1/2", "-workers", "1", "-out", dir}); code != exitInterrupted {
		t.Fatalf("exit %d, want %d\n%s%s", code, exitInterrupted, out.String(), errb.String())
	}
	if !strings.Contains(fileText(t, filepath.Join(dir, "summary.txt")), "INCOMPLETE") {
		t.Errorf("an interrupted campaign's summary does not say it is incomplete:\n%s", fileText(t, filepath.Join(dir, "summary.txt")))
	}
}

// TestMergeOldDirectories: directories written before campaign.json merge
// by the seeds they hold (with a warning), and a gap among them is named.
func TestMergeOldDirectories(t *testing.T) {
	root := t.TempDir()
	s0, s1 := mergeShards(t, root)
	for _, d := range []string{s0, s1} {
		if err := os.Remove(filepath.Join(d, manifestFile)); err != nil {
			t.Fatal(err)
		}
	}
	r := simrun(t, "merge", s0, s1).want(t, exitOK)
	if !strings.Contains(r.stdout, "40 seeds (10..49)") || strings.Count(r.stderr, "warning: ") != 2 {
		t.Errorf("stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	}
	lines := strings.SplitAfter(fileText(t, filepath.Join(s1, resultsFile)), "\n")
	writeFile(t, s1, resultsFile, strings.Join(append(lines[:3:3], lines[4:]...), ""))
	r = simrun(t, "merge", s0, s1).want(t, exitUsage)
	if !strings.Contains(r.stderr, "1 of 40 seeds missing: ") {
		t.Errorf("stderr %q", r.stderr)
	}
}

// TestShardSummarySaysIncomplete: a shard's own summary never says
// "violations: none" alone: the campaign is the merge of its shards.
func TestShardSummarySaysIncomplete(t *testing.T) {
	s0, _ := mergeShards(t, t.TempDir())
	text := fileText(t, filepath.Join(s0, "summary.txt"))
	if !strings.Contains(text, "violations: none in these seeds, but the campaign is INCOMPLETE: this is shard 0/2") {
		t.Errorf("shard summary:\n%s", text)
	}
}
