package sim

import (
	"errors"
	"strings"
	"testing"
)

// resealed is a plan text edited by hand (or by a test) with its end line
// written anew: the end line dropped, then one for the edited text added.
func resealed(text string) string {
	var keep []string
	ops, inOps := 0, false
	for _, l := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		t := strings.TrimSpace(l)
		switch {
		case isEndLine(t):
			continue
		case t == "---":
			inOps = true
		case inOps && t != "" && !strings.HasPrefix(t, "#"):
			ops++
		}
		keep = append(keep, l)
	}
	var b strings.Builder
	b.WriteString(strings.Join(keep, "\n") + "\n")
	appendEndLine(&b, ops, linesCRC(b.String()))
	return b.String()
}

// failingPlan is the plan of a legacy run that fails (seed 7 under crashy),
// as a campaign saves it.
func failingPlan(t *testing.T) string {
	t.Helper()
	p, err := Generate(Config{Seed: 7, Profile: "crashy"})
	if err != nil {
		t.Fatal(err)
	}
	return p.String()
}

// TestPlanEndLine: a printed plan ends with its end line and parses back;
// every cut of it at a line boundary (the first 200 lines, only the header,
// all but the end line), an op lost or changed, and text after the end line
// are refused with ErrPlanNotWhole, naming what is wrong.
func TestPlanEndLine(t *testing.T) {
	text := failingPlan(t)
	lines := strings.SplitAfter(text, "\n")
	if n := len(lines); n < 250 || !strings.HasPrefix(lines[n-2], "end ops=") {
		t.Fatalf("%d lines, last %q: want a long plan ending with its end line", n, lines[n-2])
	}
	if _, err := ParsePlan(text); err != nil {
		t.Fatalf("whole plan: %v", err)
	}
	if _, err := ParsePlan(strings.TrimSuffix(text, "\n")); err != nil {
		t.Errorf("whole plan without its last newline: %v", err)
	}
	header := text[:strings.Index(text, "---\n")+4]
	cases := []struct{ name, text, want string }{
		{"first 200 lines", strings.Join(lines[:200], ""), "no end line after"},
		{"header only", header, "no end line after 0 ops"},
		{"header without ---", text[:strings.Index(text, "---\n")], `no "---" line`},
		{"all but the end line", strings.Join(lines[:len(lines)-2], ""), "the file was cut short"},
		{"end line cut", strings.TrimSuffix(text, "\n")[:len(text)-3], "crc32="},
		{"an op lost", strings.Replace(text, lines[20], "", 1), "the end line counts"},
		{"an op changed", strings.Replace(text, "advance ", "advance 1", 1), "changed or damaged"},
		{"a header changed", strings.Replace(text, "seed 7\n", "seed 8\n", 1), "changed or damaged"},
		{"text after the end", text + "connect p1\n", "text after the end line"},
		{"two end lines", text + lines[len(lines)-2], "text after the end line"},
		{"bad end line", strings.Replace(text, "end ops=", "end ops=x", 1), "want \"end ops=N crc32=XXXXXXXX\""},
	}
	for _, c := range cases {
		_, err := ParsePlan(c.text)
		if !errors.Is(err, ErrPlanNotWhole) || !errors.Is(err, ErrPlan) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want ErrPlanNotWhole containing %q", c.name, err, c.want)
		}
	}
}

// TestLegacyPlanWithoutEndLine: a plan of the format before end lines (1)
// parses without one, keeps its format, and prints without one; with an
// end line it is checked like any other.
func TestLegacyPlanWithoutEndLine(t *testing.T) {
	text := failingPlan(t)
	lines := strings.SplitAfter(text, "\n")
	legacy := strings.Replace(strings.Join(lines[:len(lines)-2], ""), "mqttlab-plan 2\n", "mqttlab-plan 1\n", 1)
	p, err := ParsePlan(legacy)
	if err != nil {
		t.Fatal(err)
	}
	if p.Header.Format != LegacyPlanFormat || p.String() != legacy {
		t.Errorf("format %d; printed back:\n%.300s", p.Header.Format, p.String())
	}
	if _, err := ParsePlan(resealed(legacy)); err != nil {
		t.Errorf("legacy plan with an end line: %v", err)
	}
	if _, err := ParsePlan(strings.ReplaceAll(resealed(legacy), "\n", " \r\n")); err != nil {
		t.Errorf("white space around lines (CRLF endings) is not what the checksum covers: %v", err)
	}
}
