package main

import (
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/mqttlab/mqttlab/engine"
	"github.com/mqttlab/mqttlab/plots"
	"github.com/mqttlab/mqttlab/sim"
)

// TestUsageErrors: every bad flag, value, name or file exits 2 with one line
// naming what is wrong (plus, for usage errors, one line pointing at -h).
func TestUsageErrors(t *testing.T) {
	dir := t.TempDir()
	corrupt := writeFile(t, dir, "corrupt.plan", "mqttlab-plan 1\nseed 1\n---\nconnect p1\nfly p1 to=moon\n")
	noHeader := writeFile(t, dir, "noheader.plan", "connect p1\n")
	badPreset := writeFile(t, dir, "badpreset.plan", "mqttlab-plan 1\nseed 1\npreset nosuch\n---\nconnect p1\n")
	badNode := writeFile(t, dir, "badnode.plan", sealed(t, "mqttlab-plan 1\nseed 1\nprofile calm\npreset fixed\nscenario standard\nversion 5\n---\ncrash nobody\n"))
	cases := []struct {
		name string
		args []string
		want string // in the first line
		hint bool   // a second line pointing at -h
	}{
		{"unknown flag", []string{"run", "-nosuch"}, "-nosuch", true},
		{"bad seed", []string{"run", "-seed", "abc"}, "-seed", true},
		{"version 7", []string{"run", "-version", "7"}, `-version "7"`, true},
		{"unknown preset", []string{"run", "-preset", "nosuch"}, `"nosuch"`, true},
		{"unknown profile", []string{"campaign", "-profile", "nosuch"}, `-profile`, true},
		{"unknown scenario", []string{"run", "-scenario", "nosuch"}, `-scenario`, true},
		{"bad judge", []string{"replay", "x.plan", "-judge", "lenient"}, `-judge "lenient"`, true},
		{"shard 3/2", []string{"campaign", "-shard", "3/2"}, `-shard "3/2"`, true},
		{"shard form", []string{"campaign", "-shard", "2"}, `-shard "2"`, true},
		{"version 4", []string{"run", "-version", "4"}, `-version "4": want 3 (or 3.1.1) or 5`, true},
		{"zero seeds", []string{"campaign", "-seeds", "0"}, "-seeds: must be a positive number", true},
		{"negative seeds", []string{"campaign", "-seeds", "-5"}, `"-5" for flag -seeds: must be a positive number`, true},
		{"seeds not a number", []string{"campaign", "-seeds", "many"}, "-seeds: must be a positive number", true},
		{"negative start", []string{"campaign", "-start", "-1"}, "-start: must be a whole number >= 0", true},
		{"zero workers", []string{"campaign", "-workers", "0"}, "-workers: must be a positive number", true},
		{"negative workers", []string{"campaign", "-workers", "-2"}, "-workers: must be a positive number", true},
		{"campaign argument", []string{"campaign", "extra"}, `"extra"`, true},
		{"unknown experiment", []string{"experiment", "nosuch"}, strings.Join(plots.Names(), ", "), true},
		{"experiment trials", []string{"experiment", "ack-order", "-trials", "0"}, "-trials: must be a positive number", true},
		{"experiment no name", []string{"experiment"}, "NAME", true},
		{"replay no file", []string{"replay"}, "plan FILE", true},
		{"replay missing file", []string{"replay", filepath.Join(dir, "missing.plan")}, "missing.plan", false},
		{"corrupt plan", []string{"replay", corrupt}, `line 5: unknown op "fly"`, false},
		{"plan without header", []string{"replay", noHeader}, "---", false},
		{"plan with unknown preset", []string{"replay", badPreset}, `"nosuch"`, false},
		{"plan with unknown node", []string{"replay", badNode}, `"nobody"`, false},
		{"run -plan corrupt", []string{"run", "-plan", corrupt}, "unknown op", false},
		{"merge nothing", []string{"merge"}, "DIR", true},
		{"merge not a campaign", []string{"merge", dir}, "not a campaign directory", false},
		{"unknown subcommand", []string{"fly"}, `"fly"`, true},
		{"listing argument", []string{"presets", "x"}, `"x"`, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := simrun(t, c.args...).want(t, exitUsage)
			if r.stdout != "" {
				t.Errorf("stdout %q", r.stdout)
			}
			lines := strings.Split(strings.TrimSuffix(r.stderr, "\n"), "\n")
			if !strings.Contains(lines[0], c.want) || !strings.HasPrefix(lines[0], "simrun") {
				t.Errorf("first line %q does not name %q", lines[0], c.want)
			}
			wantLines := 1
			if c.hint {
				wantLines = 2
				if !strings.Contains(lines[len(lines)-1], "-h") {
					t.Errorf("no hint to -h: %q", r.stderr)
				}
			}
			if len(lines) != wantLines {
				t.Errorf("%d lines of error, want %d: %q", len(lines), wantLines, r.stderr)
			}
		})
	}
}

// TestHelp: -h at the top lists every subcommand; -h of each subcommand
// prints its usage and exits 0.
func TestHelp(t *testing.T) {
	top := simrun(t, "-h").want(t, exitOK)
	for _, c := range commands() {
		if !strings.Contains(top.stdout, "  "+c.name+" ") {
			t.Errorf("top help lacks %s:\n%s", c.name, top.stdout)
		}
		r := simrun(t, c.name, "-h").want(t, exitOK)
		if !strings.HasPrefix(r.stdout, "Usage: simrun "+c.name) || r.stderr != "" {
			t.Errorf("%s -h: %q %q", c.name, r.stdout, r.stderr)
		}
	}
	for _, status := range []string{"0    clean", "1    a violation", "2    usage", "3    I/O", "130  interrupted"} {
		if !strings.Contains(strings.ReplaceAll(top.stdout, "\n", " "), status) {
			t.Errorf("top help lacks exit status %q:\n%s", status, top.stdout)
		}
	}
	if r := simrun(t, "campaign", "-h").want(t, exitOK); !strings.Contains(r.stdout, "-shard") || !strings.Contains(r.stdout, "-resume") || !strings.Contains(r.stdout, "-force") {
		t.Errorf("campaign -h lacks flags:\n%s", r.stdout)
	}
	simrun(t).want(t, exitUsage)
}

// TestListings: presets, profiles and scenarios print one line each, name
// first, then its doc.
func TestListings(t *testing.T) {
	var presets, profiles, scenarios [][2]string
	for _, p := range engine.Presets() {
		presets = append(presets, [2]string{p.Name, p.Doc})
	}
	for _, p := range sim.Profiles() {
		profiles = append(profiles, [2]string{p.Name, p.Doc})
	}
	for _, s := range sim.Scenarios() {
		scenarios = append(scenarios, [2]string{s.Name, s.Doc})
	}
	for cmd, rows := range map[string][][2]string{"presets": presets, "profiles": profiles, "scenarios": scenarios} {
		r := simrun(t, cmd).want(t, exitOK)
		lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
		if len(lines) != len(rows) || len(rows) == 0 {
			t.Errorf("%s: %d lines for %d entries", cmd, len(lines), len(rows))
			continue
		}
		for i, row := range rows {
			f := strings.Fields(lines[i])
			if f[0] != row[0] || !strings.HasSuffix(lines[i], "  "+row[1]) {
				t.Errorf("%s line %q, want %s and its doc", cmd, lines[i], row[0])
			}
		}
	}
}

// TestExperiment: -list names every experiment; a run writes CSV, PNG and
// SVG, and the CSV does not depend on the number of workers.
func TestExperiment(t *testing.T) {
	list := simrun(t, "experiment", "-list").want(t, exitOK)
	for _, name := range plots.Names() {
		if !strings.Contains(list.stdout, name+" ") {
			t.Errorf("-list lacks %s:\n%s", name, list.stdout)
		}
	}
	name := plots.Names()[0]
	a, b := t.TempDir(), t.TempDir()
	r := simrun(t, "experiment", name, "-trials", "2", "-seed", "3", "-workers", "1", "-out", a).want(t, exitOK)
	simrun(t, "experiment", "-trials", "2", "-seed", "3", "-workers", "2", "-out", b, name).want(t, exitOK)
	for _, ext := range []string{"csv", "png", "svg"} {
		path := filepath.Join(a, name+"."+ext)
		if len(fileText(t, path)) == 0 || !strings.Contains(r.stdout, "wrote "+path) {
			t.Errorf("%s empty or not reported", path)
		}
	}
	if x, y := fileText(t, filepath.Join(a, name+".csv")), fileText(t, filepath.Join(b, name+".csv")); x != y {
		t.Errorf("CSV with 1 worker:\n%s\nwith 2:\n%s", x, y)
	}
	if !strings.HasPrefix(fileText(t, filepath.Join(a, name+".csv")), "experiment,variant,x,") {
		t.Errorf("CSV header: %.60q", fileText(t, filepath.Join(a, name+".csv")))
	}
}

// TestExperimentAll: `experiment all` writes the three files of every
// experiment into one directory.
func TestExperimentAll(t *testing.T) {
	dir := t.TempDir()
	r := simrun(t, "experiment", "all", "-trials", "1", "-workers", "2", "-out", dir).want(t, exitOK)
	for _, name := range plots.Names() {
		for _, ext := range []string{"csv", "png", "svg"} {
			path := filepath.Join(dir, name+"."+ext)
			if len(fileText(t, path)) == 0 || !strings.Contains(r.stdout, "wrote "+path) {
				t.Errorf("%s empty or not reported", path)
			}
		}
	}
}

// TestIOFailuresExit3: an output that cannot be written (a -save, -trace or
// -out path under a regular file) exits 3, not the usage errors' 2, with
// one line naming the path.
func TestIOFailuresExit3(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "file", "not a directory\n")
	under := filepath.Join(file, "sub")
	cases := [][]string{
		{"run", "-seed", "1", "-save", filepath.Join(under, "x.plan")},
		{"run", "-seed", "1", "-trace", filepath.Join(under, "x.trace")},
		{"campaign", "-seeds", "2", "-out", under},
		{"experiment", "ack-order", "-trials", "1", "-out", under},
	}
	for _, args := range cases {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			r := simrun(t, args...).want(t, exitIO)
			lines := strings.Split(strings.TrimSuffix(r.stderr, "\n"), "\n")
			if len(lines) != 1 || !strings.Contains(lines[0], file) {
				t.Errorf("stderr %q does not name %s in one line", r.stderr, file)
			}
		})
	}
}

// TestHelpTexts: the help texts say what they mean: -workload's defaults
// in words, broker's config keys after its flags (as it says), shrink's
// output flag -out (-o its alias), 'simrun help CMD' is CMD's help, and
// 'simrun version' prints the build info.
func TestHelpTexts(t *testing.T) {
	run := simrun(t, "run", "-h").want(t, exitOK)
	if strings.Contains(run.stdout, "pin );") || !strings.Contains(run.stdout, "key=draw unpins; by default nothing is pinned") {
		t.Errorf("-workload's help:\n%s", run.stdout)
	}
	if help := simrun(t, "help", "run").want(t, exitOK); help.stdout != run.stdout {
		t.Errorf("help run:\n%s\nrun -h:\n%s", help.stdout, run.stdout)
	}
	simrun(t, "help", "nosuch").want(t, exitUsage)
	if top := simrun(t, "help").want(t, exitOK); !strings.Contains(top.stdout, "Subcommands:") {
		t.Errorf("help: %s", top.stdout)
	}
	broker := simrun(t, "broker", "-h").want(t, exitOK).stdout
	flags, keys := strings.Index(broker, "\nFlags:"), strings.Index(broker, "A broker config file has")
	if flags < 0 || keys < flags || !strings.Contains(broker, "(keys below)") {
		t.Errorf("broker -h: the config keys are not below the flags:\n%s", broker)
	}
	shrink := simrun(t, "shrink", "-h").want(t, exitOK).stdout
	if !strings.Contains(shrink, "  -out FILE") || !strings.Contains(shrink, "  -o string\n") {
		t.Errorf("shrink -h: no -out and -o alias:\n%s", shrink)
	}
	for _, cmd := range []string{"shrink", "campaign", "live", "experiment"} {
		if h := simrun(t, cmd, "-h").stdout; !strings.Contains(h, "  -out ") {
			t.Errorf("%s -h has no -out", cmd)
		}
	}
	v := simrun(t, "version").want(t, exitOK).stdout
	lines := strings.Split(strings.TrimSuffix(v, "\n"), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "simrun ") || !strings.HasPrefix(lines[1], "commit ") || !strings.HasPrefix(lines[2], "go go1.") {
		t.Errorf("version:\n%s", v)
	}
}

// TestVersionText: the commit line carries the VCS revision, its time and
// a modified tree's mark.
func TestVersionText(t *testing.T) {
	info := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/mqttlab/mqttlab", Version: "(devel)"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.time", Value: "2026-12-02T00:00:00Z"}, {Key: "vcs.modified", Value: "true"}}}
	want := "simrun github.com/mqttlab/mqttlab (devel)\ncommit abc123 (2026-12-02T00:00:00Z) +modified\ngo go1.26.8\n"
	if got := versionText(info); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	info.Settings = nil
	if got := versionText(info); !strings.Contains(got, "commit unknown") {
		t.Errorf("without VCS info: %q", got)
	}
}
