package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSelfName: printed commands name the binary as it was invoked: its
// base name when that is what PATH finds, else the absolute path it was run
// as (quoted for sh when it must be), never `go run`.
func TestSelfName(t *testing.T) {
	dir := t.TempDir()
	bin := writeFile(t, dir, "simrun", "")
	other := writeFile(t, t.TempDir(), "simrun", "")
	spaced := filepath.Join(dir, "my bin")
	if err := os.Mkdir(spaced, 0o755); err != nil {
		t.Fatal(err)
	}
	spacedBin := writeFile(t, spaced, "simrun", "")
	found := func(path string) func(string) (string, error) {
		return func(string) (string, error) { return path, nil }
	}
	notFound := func(string) (string, error) { return "", errors.New("not found") }
	exe := func() (string, error) { return bin, nil }
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(wd, bin)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, arg0 string
		lookPath   func(string) (string, error)
		want       string
	}{
		{"through PATH", "simrun", found(bin), "simrun"},
		{"a path PATH finds too", bin, found(bin), "simrun"},
		{"a path PATH does not find", bin, notFound, bin},
		{"PATH finds another simrun", bin, found(other), bin},
		{"a relative path", rel, notFound, bin},
		{"a path sh must quote", spacedBin, notFound, "'" + spacedBin + "'"},
		{"go run's temporary binary", "/tmp/go-build123/b001/exe/simrun", notFound, "simrun"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := selfName(c.arg0, c.lookPath, exe); got != c.want {
				t.Errorf("selfName(%q) = %q, want %q", c.arg0, got, c.want)
			}
		})
	}
}

// TestHintsAreAbsolute: the replay and resume commands a campaign prints
// name its directory by its absolute path, so they run from anywhere.
func TestHintsAreAbsolute(t *testing.T) {
	t.Chdir(t.TempDir())
	r := simrun(t, "campaign", "-seeds", "4", "-preset", "legacy", "-scenario", "standard", "-shrink", "0", "-out", "rel").want(t, exitViolation)
	abs, err := filepath.Abs("rel")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{replayPrefix + " replay " + filepath.Join(abs, "seed-"), replayPrefix + " shrink " + filepath.Join(abs, "seed-")} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("no %q in:\n%s", want, r.stdout)
		}
	}
	if got := fileText(t, filepath.Join(abs, "failing.txt")); !strings.Contains(got, replayPrefix+" replay "+abs) {
		t.Errorf("failing.txt: %s", got)
	}
	c := campaign{args: []string{"-seeds", "4", "-out=rel", "-resume"}, out: "rel"}
	if got, want := c.resumeCommand(), replayPrefix+" campaign -seeds 4 -out "+abs+" -resume"; got != want {
		t.Errorf("resume command %q, want %q", got, want)
	}
}
