package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// replayPrefix starts every printed command (replay lines, failing.txt,
// merge and resume hints, -json "replay", the charts' replay lines, live's
// replay line): this binary as it was invoked (selfName), so a hint runs
// as printed from any directory.
var replayPrefix = selfName(os.Args[0], exec.LookPath, os.Executable)

// selfName is how hints name this binary: its base name when that name on
// PATH is this very executable (or it was run through PATH), else the
// absolute path it was run as. A binary of `go run` (in a go-build
// directory that is gone once it exits) is named by its base name: build
// it (go build -o simrun ./cmd/simrun) and put it on PATH.
func selfName(arg0 string, lookPath func(string) (string, error), executable func() (string, error)) string {
	base := filepath.Base(arg0)
	if !strings.ContainsRune(arg0, filepath.Separator) {
		return base // found through PATH
	}
	if onPath, err := lookPath(base); err == nil && sameFile(onPath, arg0) {
		return base
	}
	abs, err := filepath.Abs(arg0)
	if err != nil {
		if exe, err2 := executable(); err2 == nil {
			abs = exe
		} else {
			return base
		}
	}
	if strings.Contains(filepath.ToSlash(abs), "/go-build") {
		return base
	}
	return shellQuote(abs)
}

// sameFile reports whether paths a and b name one file.
func sameFile(a, b string) bool {
	sa, err := os.Stat(a)
	if err != nil {
		return false
	}
	sb, err := os.Stat(b)
	return err == nil && os.SameFile(sa, sb)
}

// absPath is path made absolute (for printed commands, which must run from
// any directory), shell-quoted when it needs to be.
func absPath(path string) string {
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	return shellQuote(path)
}

// shellQuote returns s as one sh word: itself when it holds only
// characters sh takes literally, else single-quoted.
func shellQuote(s string) string {
	const literal = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=,+@%"
	for _, r := range s {
		if !strings.ContainsRune(literal, r) {
			return shellWord(s)
		}
	}
	if s == "" {
		return shellWord(s)
	}
	return s
}
