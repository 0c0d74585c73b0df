package plots

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// golden compares got with testdata/name, or rewrites it under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./plots -run %s -update to create it)", err, t.Name())
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file:\n--- got\n%s--- want\n%s", name, got, want)
	}
}

// TestCSVGolden checks the CSV of a small fake sweep against its golden file.
func TestCSVGolden(t *testing.T) {
	s, err := Measure(fakeExperiment(), Config{Trials: 40, Seed: 7, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteCSV(&buf, s); err != nil {
		t.Fatal(err)
	}
	golden(t, "fake.csv", buf.Bytes())
}

// TestCSVFormat checks the header and the formatting of one point.
func TestCSVFormat(t *testing.T) {
	s := Sweep{Name: "exp", Points: []Point{{X: 0.005, Variant: "fixed", Failures: 1, Trials: 3, Rate: 1.0 / 3, Lo: 0.0615, Hi: 0.79234567}}}
	var buf bytes.Buffer
	if err := WriteCSV(&buf, s); err != nil {
		t.Fatal(err)
	}
	want := "experiment,variant,x,failures,trials,rate,lo,hi\nexp,fixed,0.005,1,3,0.333333,0.061500,0.792346\n"
	if buf.String() != want {
		t.Errorf("CSV =\n%s\nwant\n%s", buf.String(), want)
	}
}
