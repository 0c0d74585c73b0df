package main

import (
	"fmt"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
)

// bar is a progress bar on the terminal, or nothing when stdout is not one
// (a file, a pipe, a test's buffer): then every method is a no-op.
type bar struct {
	pb *progressbar.ProgressBar
}

// newBar returns a bar counting total units, quiet unless stdout is a
// terminal. It shows done/total, units per second and the ETA.
func (e *env) newBar(total int64, unit, desc string) *bar {
	if !e.terminal {
		return &bar{}
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
	return &bar{pb: pb}
}

// set moves the bar to done.
func (b *bar) set(done int64) {
	if b.pb != nil {
		_ = b.pb.Set64(done)
	}
}

// describe changes the text before the bar.
func (b *bar) describe(format string, args ...any) {
	if b.pb != nil {
		b.pb.Describe(fmt.Sprintf(format, args...))
	}
}

// finish removes the bar, leaving the line clean for the summary.
func (b *bar) finish() {
	if b.pb != nil {
		_ = b.pb.Clear()
		_ = b.pb.Exit()
	}
}
