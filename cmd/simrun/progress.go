package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
)

// textProgressEvery is how often a campaign or experiment whose stdout is not a
// terminal prints a progress line to stderr.
const textProgressEvery = 5 * time.Second

// bar shows the progress of a long job. On a terminal (stdout) it is a
// progress bar; otherwise, when e.progressEvery is set, a line on stderr
// every e.progressEvery (done, the note, units per second, time left), so a
// job run under a CI log or into a file is not silent for minutes;
// otherwise (a test's buffers) nothing.
type bar struct {
	pb *progressbar.ProgressBar
	// The text lines, when pb is nil and w is set.
	mu          sync.Mutex
	w           io.Writer
	every       time.Duration
	total       int64
	unit, desc  string
	note        string
	began, last time.Time
}

// newBar returns a bar counting total units of a job described by desc.
func (e *env) newBar(total int64, unit, desc string) *bar {
	if !e.terminal {
		if e.progressEvery <= 0 {
			return &bar{}
		}
		now := time.Now()
		return &bar{w: e.stderr, every: e.progressEvery, total: total, unit: unit, desc: desc, began: now, last: now}
	}
	pb := progressbar.NewOptions64(total,
		progressbar.OptionSetWriter(os.Stdout),
		progressbar.OptionSetDescription(desc),
		progressbar.OptionShowCount(),
		progressbar.OptionShowIts(),
		progressbar.OptionSetItsString(unit),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionSetElapsedTime(true),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionSetWidth(30),
		progressbar.OptionClearOnFinish(),
	)
	return &bar{pb: pb, desc: desc}
}

// set moves the bar to done.
func (b *bar) set(done int64) {
	if b.pb != nil {
		_ = b.pb.Set64(done)
		return
	}
	if b.w == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	now := time.Now()
	if now.Sub(b.last) < b.every || done >= b.total {
		return
	}
	b.last = now
	fmt.Fprintln(b.w, b.line(done, now.Sub(b.began)))
}

// line is the text progress line after elapsed with done units done.
func (b *bar) line(done int64, elapsed time.Duration) string {
	rate := float64(done) / elapsed.Seconds()
	left := "unknown"
	if rate > 0 {
		left = (time.Duration(float64(b.total-done)/rate) * time.Second).Round(time.Second).String()
	}
	note := ""
	if b.note != "" {
		note = ", " + b.note
	}
	return fmt.Sprintf("%s: %d/%d %s done%s, %.1f %s/s, about %s left", b.desc, done, b.total, b.unit, note, rate, b.unit, left)
}

// describe sets the note shown with the count ("3 failing").
func (b *bar) describe(format string, args ...any) {
	note := fmt.Sprintf(format, args...)
	if b.pb != nil {
		b.pb.Describe(b.desc + ": " + note)
		return
	}
	b.mu.Lock()
	b.note = note
	b.mu.Unlock()
}

// finish removes the bar, leaving the line clean for the summary.
func (b *bar) finish() {
	if b.pb != nil {
		_ = b.pb.Clear()
		_ = b.pb.Exit()
	}
}
