package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// resultsFile is the name of a campaign's JSON-lines results in its -out dir.
const resultsFile = "results.jsonl"

// record is one finished seed of a campaign: one line of results.jsonl.
type record struct {
	Seed     uint64 `json:"seed"`
	Preset   string `json:"preset"`
	Profile  string `json:"profile"`
	Scenario string `json:"scenario"`
	Version  string `json:"version"`
	Judge    string `json:"judge"`
	Checksum string `json:"checksum"`
	// Violations counts the violations of the judged invariants by invariant.
	Violations map[string]int `json:"violations"`
	// First is the first violation (by step), for the failing list.
	First *violationJSON `json:"first,omitempty"`
	// Error is set when the run did not complete (a sim error or a panic):
	// a finding too, counted as a failure.
	Error string    `json:"error,omitempty"`
	Stats statsJSON `json:"stats"`
	// Ops and MinOps are the sizes of the plan and of its shrunk plan
	// (seed-N.min.plan), for a failing seed that was shrunk; 0 otherwise.
	Ops    int `json:"ops,omitempty"`
	MinOps int `json:"min_ops,omitempty"`
	// ShrinkCut is set when a signal ended the seed's shrink early: its
	// seed-N.min.plan is the smallest plan so far, and -resume redoes it.
	ShrinkCut bool `json:"shrink_interrupted,omitempty"`
	// dir is the campaign directory the record was read from (for replay
	// commands); not stored.
	dir string
}

// failed reports whether the seed found something.
func (r record) failed() bool { return len(r.Violations) > 0 || r.Error != "" }

// worldKey identifies the world of a record.
func (r record) worldKey() string {
	return r.Preset + "/" + r.Profile + "/" + r.Scenario + "/" + r.Version + "/" + r.Judge
}

// key identifies a record: its world and seed.
func (r record) key() string { return r.worldKey() + "/" + strconv.FormatUint(r.Seed, 10) }

// planName is the file name of a failing seed's plan.
func planName(seed uint64) string { return "seed-" + strconv.FormatUint(seed, 10) + ".plan" }

// readResults reads dir's results.jsonl. Lines that do not parse (a line cut
// short by a kill) are skipped and counted in bad. A missing file is no
// records.
func readResults(dir string) (recs []record, bad int, err error) {
	data, err := os.ReadFile(filepath.Join(dir, resultsFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, err
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var r record
		if err := json.Unmarshal(line, &r); err != nil || r.Checksum == "" {
			bad++
			continue
		}
		r.dir = dir
		recs = append(recs, r)
	}
	return recs, bad, sc.Err()
}

// rewriteResults replaces dir's results.jsonl by recs, one a line (used by
// -resume to drop a line cut short). The file is written beside and renamed.
func rewriteResults(dir string, recs []record) error {
	var b bytes.Buffer
	for _, r := range recs {
		line, err := json.Marshal(r)
		if err != nil {
			return err
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	path := filepath.Join(dir, resultsFile)
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b.Bytes(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// resultsWriter appends records to results.jsonl, one write per line, so a
// killed campaign loses no finished line.
type resultsWriter struct {
	f *os.File
}

// openResults opens dir's results.jsonl for appending. A file whose last
// line lacks its newline (a complete record written by hand, or by a tool
// that does not end its lines) is first ended with one, so the next record
// starts a line of its own.
func openResults(dir string) (*resultsWriter, error) {
	path := filepath.Join(dir, resultsFile)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	if err := endLine(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("ending the last line of %s: %w", path, err)
	}
	return &resultsWriter{f: f}, nil
}

// endLine appends a newline to f unless it is empty or already ends with one.
func endLine(f *os.File) error {
	st, err := f.Stat()
	if err != nil || st.Size() == 0 {
		return err
	}
	last := make([]byte, 1)
	if _, err := f.ReadAt(last, st.Size()-1); err != nil {
		return err
	}
	if last[0] == '\n' {
		return nil
	}
	_, err = f.Write([]byte{'\n'})
	return err
}

// write appends one record as a line.
func (w *resultsWriter) write(r record) error {
	line, err := json.Marshal(r)
	if err != nil {
		return err
	}
	if _, err := w.f.Write(append(line, '\n')); err != nil {
		return ioFailure(err, "writing %s", resultsFile)
	}
	return nil
}

// close closes the file.
func (w *resultsWriter) close() error { return w.f.Close() }
