package main

import (
	"regexp"
	"strconv"
	"strings"
)

// lineKind is what one line of `go test -fuzz` output says.
type lineKind uint8

// The lines the campaign understands; every other line is kept only for the
// output tail of a failed turn.
const (
	lineOther    lineKind = iota
	lineProgress          // fuzz: elapsed: 3s, execs: 65326 (21772/sec), new interesting: 4 (total: 5)
	lineBaseline          // fuzz: elapsed: 0s, gathering baseline coverage: 1/1 completed, ...
	lineCrasher           // Failing input written to testdata/fuzz/FuzzX/HASH
	lineSeedFail          // failure while testing seed corpus entry: FuzzX/HASH
	lineFail              // --- FAIL: FuzzX (...)
	linePass              // PASS / ok
)

// fuzzLine is one parsed output line.
type fuzzLine struct {
	kind    lineKind
	elapsed int64  // seconds, progress and baseline lines
	execs   int64  // progress: executions so far in this turn
	rate    int64  // progress: executions per second over the last interval
	newCov  int64  // progress: new interesting inputs found in this turn
	total   int64  // progress: corpus size
	entry   string // crasher/seed failure: "FuzzX/HASH"
}

var (
	progressRE = regexp.MustCompile(`^fuzz: elapsed: (\w+), execs: (\d+) \((\d+)/sec\), new interesting: (\d+) \(total: (\d+)\)`)
	baselineRE = regexp.MustCompile(`^fuzz: elapsed: (\w+), gathering baseline coverage`)
	crasherRE  = regexp.MustCompile(`Failing input written to testdata/fuzz/(Fuzz\w+/[0-9A-Za-z._-]+)`)
	seedFailRE = regexp.MustCompile(`^failure while testing seed corpus entry: (Fuzz\w+/\S+)`)
	failRE     = regexp.MustCompile(`^--- FAIL: Fuzz\w+`)
)

// parseLine parses one line of `go test -fuzz` output.
func parseLine(line string) fuzzLine {
	line = strings.TrimRight(line, "\r\n")
	trimmed := strings.TrimSpace(line)
	if m := progressRE.FindStringSubmatch(line); m != nil {
		return fuzzLine{kind: lineProgress, elapsed: parseElapsed(m[1]), execs: atoi(m[2]), rate: atoi(m[3]), newCov: atoi(m[4]), total: atoi(m[5])}
	}
	if m := baselineRE.FindStringSubmatch(line); m != nil {
		return fuzzLine{kind: lineBaseline, elapsed: parseElapsed(m[1])}
	}
	if m := crasherRE.FindStringSubmatch(trimmed); m != nil {
		return fuzzLine{kind: lineCrasher, entry: m[1]}
	}
	if m := seedFailRE.FindStringSubmatch(trimmed); m != nil {
		return fuzzLine{kind: lineSeedFail, entry: m[1]}
	}
	switch {
	case failRE.MatchString(line):
		return fuzzLine{kind: lineFail}
	case line == "PASS" || strings.HasPrefix(line, "ok  "):
		return fuzzLine{kind: linePass}
	}
	return fuzzLine{kind: lineOther}
}

// parseElapsed reads Go's elapsed field ("0s", "59s", "1m0s", "1h2m3s") as
// seconds; anything else is 0.
func parseElapsed(s string) int64 {
	var total, n int64
	for _, r := range s {
		switch {
		case r >= '0' && r <= '9':
			n = n*10 + int64(r-'0')
		case r == 'h':
			total, n = total+n*3600, 0
		case r == 'm':
			total, n = total+n*60, 0
		case r == 's':
			total, n = total+n, 0
		default:
			return 0
		}
	}
	return total
}

// atoi parses a decimal the regexps already checked.
func atoi(s string) int64 {
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}

// turnOutcome is what one turn found, built from its output lines.
type turnOutcome struct {
	execs    int64    // executions in the turn (last progress line)
	elapsed  int64    // seconds of fuzzing (last progress line)
	rate     int64    // last non-zero executions per second reported
	newCov   int64    // new interesting inputs found
	crashers []string // "FuzzX/HASH" written by this turn
	seedFail string   // a committed corpus entry that fails
	failed   bool     // the turn reported a FAIL
	passed   bool     // the turn reported PASS/ok
	tail     []string // the last lines, for a failure without a crasher
}

// deadlineOnly reports a turn whose only failure is Go's fuzzer reporting
// "context deadline exceeded" as its -fuzztime ran out (it does so now and
// then while a worker is busy at the deadline: the turn ran its time and
// found nothing). A crasher or a failing seed is never this.
func (o *turnOutcome) deadlineOnly() bool {
	if len(o.crashers) > 0 || o.seedFail != "" || o.execs == 0 {
		return false
	}
	for _, l := range o.tail {
		if strings.TrimSpace(l) == "context deadline exceeded" {
			return true
		}
	}
	return false
}

// tailLines is how many lines of output a turn keeps for its report.
const tailLines = 30

// add folds one output line into the outcome.
func (o *turnOutcome) add(line string) fuzzLine {
	l := parseLine(line)
	switch l.kind {
	case lineProgress:
		o.execs, o.elapsed, o.newCov = l.execs, l.elapsed, l.newCov
		if l.rate > 0 { // the last line of a turn often reports 0/sec
			o.rate = l.rate
		}
	case lineCrasher:
		o.crashers = append(o.crashers, l.entry)
	case lineSeedFail:
		o.seedFail = l.entry
	case lineFail:
		o.failed = true
	case linePass:
		o.passed = true
	}
	if len(o.tail) == tailLines {
		o.tail = append(o.tail[:0], o.tail[1:]...)
	}
	o.tail = append(o.tail, line)
	return l
}
