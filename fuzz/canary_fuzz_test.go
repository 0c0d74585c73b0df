package fuzz

import (
	"os"
	"testing"
)

// canaryEnv is the environment variable that arms FuzzCanary.
const canaryEnv = "MQTTLAB_FUZZ_CANARY"

// FuzzCanary fails on purpose, when MQTTLAB_FUZZ_CANARY=1, for any input
// starting with "bug": a needle the coverage-guided fuzzer finds in
// seconds, one byte (one new branch) at a time. It proves end to end that
// a fuzz campaign reports a crasher, saves it under testdata/fuzz, and that
// plain `go test` then replays it. Without the variable it passes every
// input, so a committed canary crasher never breaks `go test ./fuzz`.
func FuzzCanary(f *testing.F) {
	armed := os.Getenv(canaryEnv) == "1"
	f.Fuzz(func(t *testing.T, data []byte) {
		if canaryFound(data) && armed {
			t.Fatalf("canary: input %q starts with the planted needle", data)
		}
	})
}

// canaryFound reports whether data starts with the needle, a branch per
// byte so coverage guides the fuzzer to it.
func canaryFound(data []byte) bool {
	if len(data) > 0 && data[0] == 'b' {
		if len(data) > 1 && data[1] == 'u' {
			if len(data) > 2 && data[2] == 'g' {
				return true
			}
		}
	}
	return false
}
