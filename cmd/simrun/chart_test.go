package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHTMLChart: run, replay and shrink -html write the run's chart, a page that
// carries the violation first; the summary and exit status are unchanged;
// an unwritable path is an I/O failure.
func TestHTMLChart(t *testing.T) {
	dir := t.TempDir()
	plan := filepath.Join("..", "..", "seqchart", "testdata", "lost-qos2.plan")
	out := filepath.Join(dir, "sub", "chart.html")
	r := simrun(t, "replay", plan, "-html", out).want(t, exitViolation)
	if !strings.Contains(r.stdout, "NoLoss at step") {
		t.Fatalf("summary lost: %s", r.stdout)
	}
	page := fileText(t, out)
	for _, want := range []string{"<!DOCTYPE html>", `"inv":"NoLoss"`, `"cited":[`, "crash-at p1 20", `id="seqchart-data"`} {
		if !strings.Contains(page, want) {
			t.Errorf("chart lacks %q", want)
		}
	}
	run := filepath.Join(dir, "run.html")
	simrun(t, "run", "-seed", "3", "-scenario", "small", "-html", run).want(t, exitOK)
	if page := fileText(t, run); !strings.Contains(page, `"violations":null`) || !strings.Contains(page, "seed 3") {
		t.Errorf("a clean run's chart should say so and name its seed")
	}
	shrunk := filepath.Join(dir, "min.html")
	simrun(t, "shrink", plan, "-o", filepath.Join(dir, "min.plan"), "-budget", "20", "-html", shrunk).want(t, exitViolation)
	if page := fileText(t, shrunk); !strings.Contains(page, `"inv":"NoLoss"`) || !strings.Contains(page, "# shrunk from 14 ops") {
		t.Errorf("shrink -html: the chart lacks the violation or the shrunk plan")
	}
	blocker := filepath.Join(dir, "file")
	if err := os.WriteFile(blocker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	simrun(t, "run", "-seed", "3", "-scenario", "small", "-html", filepath.Join(blocker, "x.html")).want(t, exitIO)
}
