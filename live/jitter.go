package live

import (
	"sync"
	"time"
)

// jitterTick is the period of the jitter probe's timer.
const jitterTick = 5 * time.Millisecond

// jitterProbe measures the tester's own timing uncertainty while a run
// goes: how late a goroutine of this process wakes from a timer. The
// proxy's readers are such goroutines, so a packet is recorded up to that
// much after its bytes arrived; two recorded times differ from the true
// ones by at most the largest lateness seen. The judge allows that much
// slack in the keep-alive rules (model.Options.Slack).
type jitterProbe struct {
	stop chan struct{}
	done sync.WaitGroup
	mu   sync.Mutex
	max  time.Duration
	n    int
}

// startJitterProbe starts measuring.
func startJitterProbe() *jitterProbe {
	j := &jitterProbe{stop: make(chan struct{})}
	j.done.Add(1)
	go j.run()
	return j
}

func (j *jitterProbe) run() {
	defer j.done.Done()
	for {
		start := time.Now()
		t := time.NewTimer(jitterTick)
		select {
		case <-j.stop:
			t.Stop()
			return
		case <-t.C:
		}
		j.note(time.Since(start) - jitterTick)
	}
}

func (j *jitterProbe) note(late time.Duration) {
	j.mu.Lock()
	j.max = max(j.max, late)
	j.n++
	j.mu.Unlock()
}

// finish stops the probe and returns the largest lateness seen, rounded
// up to a whole millisecond (at least 1 ms: the history's times come
// from two clocks reads apart), and the number of samples.
func (j *jitterProbe) finish() (time.Duration, int) {
	close(j.stop)
	j.done.Wait()
	j.mu.Lock()
	defer j.mu.Unlock()
	return max(j.max.Truncate(time.Millisecond)+time.Millisecond, time.Millisecond), j.n
}
