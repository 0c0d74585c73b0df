package properties

import (
	"fmt"
	"strings"

	"pgregory.net/rapid"
)

// recordTB is a rapid.TB that records instead of failing a test: rapid.Check
// on it runs a property as usual (checks, shrinking, the final re-run of the
// minimised case) and the caller reads the verdict afterwards.
type recordTB struct {
	name   string
	failed bool
	logs   strings.Builder
}

func (r *recordTB) Helper()                  {}
func (r *recordTB) Name() string             { return r.name }
func (r *recordTB) Logf(f string, a ...any)  { fmt.Fprintf(&r.logs, f+"\n", a...) }
func (r *recordTB) Log(a ...any)             { fmt.Fprintln(&r.logs, a...) }
func (r *recordTB) Skipf(f string, a ...any) { r.Logf(f, a...) }
func (r *recordTB) Skip(a ...any)            { r.Log(a...) }
func (r *recordTB) SkipNow()                 {}
func (r *recordTB) Errorf(f string, a ...any) {
	r.Logf(f, a...)
	r.failed = true
}
func (r *recordTB) Error(a ...any) {
	r.Log(a...)
	r.failed = true
}
func (r *recordTB) Fatalf(f string, a ...any) { r.Errorf(f, a...) }
func (r *recordTB) Fatal(a ...any)            { r.Error(a...) }
func (r *recordTB) FailNow()                  { r.failed = true }
func (r *recordTB) Fail()                     { r.failed = true }
func (r *recordTB) Failed() bool              { return r.failed }

// Search is the verdict of running a property to find a counterexample.
type Search struct {
	Found bool
	// Log is rapid's output: the checks made, the failing case's draws.
	Log string
}

// FindCounterexample runs prop under rapid.Check with the usual budget
// (-rapid.checks, 100 by default) and reports whether rapid falsified it,
// without failing the calling test. name names the run in rapid's output
// and its fail file; rapid writes that file under testdata/rapid/ in the
// working directory, so canary tests run it from a temporary directory.
func FindCounterexample(name string, prop func(*rapid.T)) Search {
	tb := &recordTB{name: name}
	rapid.Check(tb, prop)
	return Search{Found: tb.failed, Log: tb.logs.String()}
}
