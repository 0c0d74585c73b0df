package live

import (
	"fmt"
	"io"
	"time"
)

// progress writes "live: ..." lines with the time since it started: what
// a long judgement or write is doing, on the tester's log (stderr).
type progress struct {
	w     io.Writer
	start time.Time
}

func startProgress(w io.Writer) *progress {
	if w == nil {
		w = io.Discard
	}
	return &progress{w: w, start: time.Now()}
}

func (p *progress) say(format string, args ...any) {
	fmt.Fprintf(p.w, "live: %s (%.1fs)\n", fmt.Sprintf(format, args...), time.Since(p.start).Seconds())
}
