package main

import "testing"

// TestDeadlineOnly: a turn that fuzzed and then failed only with Go's
// "context deadline exceeded" at its -fuzztime is a finished turn; a crasher,
// a failing seed, no executions or another failure is not.
func TestDeadlineOnly(t *testing.T) {
	deadline := []string{"fuzz: elapsed: 2s, execs: 98506 (48649/sec)", "--- FAIL: FuzzNothing (2.03s)", "    context deadline exceeded", "FAIL"}
	for _, c := range []struct {
		name string
		o    turnOutcome
		want bool
	}{
		{"deadline only", turnOutcome{execs: 98506, tail: deadline}, true},
		{"a crasher too", turnOutcome{execs: 98506, tail: deadline, crashers: []string{"FuzzX/abc"}}, false},
		{"a failing seed", turnOutcome{execs: 98506, tail: deadline, seedFail: "FuzzX/seed"}, false},
		{"never ran", turnOutcome{tail: deadline}, false},
		{"another failure", turnOutcome{execs: 10, tail: []string{"--- FAIL: FuzzX", "panic: boom", "FAIL"}}, false},
	} {
		if got := c.o.deadlineOnly(); got != c.want {
			t.Errorf("%s: deadlineOnly = %v, want %v", c.name, got, c.want)
		}
	}
}
