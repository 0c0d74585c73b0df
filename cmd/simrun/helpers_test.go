package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mqttlab/mqttlab/sim"
)

// result is what one invocation of run produced.
type result struct {
	code           int
	stdout, stderr string
}

// simrun runs the command with args and returns its status and output.
func simrun(t *testing.T, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(args, &out, &errb)
	return result{code: code, stdout: out.String(), stderr: errb.String()}
}

// want fails the test unless the invocation exited with code.
func (r result) want(t *testing.T, code int) result {
	t.Helper()
	if r.code != code {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, code, r.stdout, r.stderr)
	}
	return r
}

// summaryJSON runs with -json and decodes the summary. A negative code
// accepts 0 and 1 (a run judged either way).
func summaryJSON(t *testing.T, code int, args ...string) summary {
	t.Helper()
	r := simrun(t, append(args, "-json")...)
	if code >= 0 || r.code > exitViolation {
		r.want(t, max(code, 0))
	}
	var s summary
	if err := json.Unmarshal([]byte(r.stdout), &s); err != nil {
		t.Fatalf("decoding %q: %v", r.stdout, err)
	}
	if len(s.Checksum) != 16 {
		t.Fatalf("checksum %q is not 16 hex digits", s.Checksum)
	}
	return s
}

// campaignBlock cuts the deterministic summary block out of a campaign's or
// merge's stdout: from "== campaign summary ==" up to the replay list.
func campaignBlock(t *testing.T, stdout string) string {
	t.Helper()
	i := strings.Index(stdout, "== campaign summary ==")
	if i < 0 {
		t.Fatalf("no summary in:\n%s", stdout)
	}
	block := stdout[i:]
	for _, end := range []string{"replay a failing seed:", "interrupted:", "shard "} {
		if j := strings.Index(block, "\n"+end); j >= 0 {
			block = block[:j+1]
		}
	}
	return block
}

// readRecords reads a campaign directory's results.jsonl.
func readRecords(t *testing.T, dir string) []record {
	t.Helper()
	recs, bad, err := readResults(dir)
	if err != nil || bad != 0 {
		t.Fatalf("reading %s: %d bad lines, %v", dir, bad, err)
	}
	return recs
}

// fileText reads a file.
func fileText(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// writeFile writes a file in dir and returns its path.
func writeFile(t *testing.T, dir, name, text string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// sealed is a plan text of the legacy format printed in the current one,
// with its end line.
func sealed(t *testing.T, legacy string) string {
	t.Helper()
	p, err := sim.ParsePlan(legacy)
	if err != nil {
		t.Fatal(err)
	}
	p.Header.Format = sim.PlanFormat
	return p.String()
}
