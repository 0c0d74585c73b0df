package fuzz

import "testing"

// FuzzCanary fails on purpose for any input starting with "bug": a needle
// the coverage-guided fuzzer finds in seconds, one byte (one new branch) at
// a time. It proves end to end that a fuzz campaign reports a crasher, saves
// it under testdata/fuzz, and that plain `go test ./fuzz` then fails on it
// (as TigerBeetle's canary fuzzer does). Its committed corpus holds no such
// input, the campaign command runs it only with -canary, and the OSS-Fuzz
// build leaves it out, so it fails only once a canary campaign saved its
// crasher: delete that file to go green again.
func FuzzCanary(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		if canaryFound(data) {
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
