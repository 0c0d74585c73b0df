package live

import (
	"errors"
	"net"
	"sync"
	"time"

	"github.com/mqttlab/mqttlab/engine"
)

// IOTimeout bounds every socket write and every dial of the drivers, so a
// dead peer fails a command instead of hanging the event loop.
const IOTimeout = 5 * time.Second

// ErrClosed reports a command to a driver that was closed (or crashed).
var ErrClosed = errors.New("live: driver closed")

// loop is a driver's single event loop: every engine Step, every action and
// all driver state live on its goroutine; other goroutines (socket readers,
// timers, the application) post closures to it.
type loop struct {
	in     chan func()
	quit   chan struct{}
	done   chan struct{}
	once   sync.Once
	base   time.Time
	baseNs int64
	timers map[engine.TimerID]*loopTimer // loop goroutine only
	gen    uint64
}

type loopTimer struct {
	t   *time.Timer
	gen uint64
}

func newLoop() *loop {
	now := time.Now()
	return &loop{
		in:     make(chan func(), 64),
		quit:   make(chan struct{}),
		done:   make(chan struct{}),
		base:   now,
		baseNs: now.UnixNano(),
		timers: map[engine.TimerID]*loopTimer{},
	}
}

// now maps wall time to engine time: Unix nanoseconds at the loop's start,
// advanced by the monotonic clock, so it never goes back within a run and
// keeps counting across a reboot.
func (l *loop) now() engine.Time {
	return engine.Time(l.baseNs + int64(time.Since(l.base)))
}

// run executes posted closures until stop.
func (l *loop) run() {
	defer close(l.done)
	for {
		select {
		case f := <-l.in:
			if l.stopped() {
				// Both were ready and select chose at random: nothing
				// queued runs once stop was asked.
				l.stopTimers()
				return
			}
			f()
		case <-l.quit:
			l.stopTimers()
			return
		}
	}
}

// post hands f to the loop; it reports false when the loop has stopped.
func (l *loop) post(f func()) bool {
	select {
	case l.in <- f:
		return true
	case <-l.quit:
		return false
	}
}

// call runs f on the loop and waits for it; false when the loop has stopped.
func (l *loop) call(f func()) bool {
	ran := make(chan struct{})
	if !l.post(func() { f(); close(ran) }) {
		return false
	}
	select {
	case <-ran:
		return true
	case <-l.done:
		return false
	}
}

// stop ends the loop and waits for it. Safe to call more than once, but
// never from the loop goroutine (use stopAsync there).
func (l *loop) stop() {
	l.stopAsync()
	<-l.done
}

// stopTimers stops every armed timer (the loop is ending).
func (l *loop) stopTimers() {
	for _, t := range l.timers {
		t.t.Stop()
	}
}

// stopAsync asks the loop to end after the closure it is running.
func (l *loop) stopAsync() { l.once.Do(func() { close(l.quit) }) }

// stopped reports whether stop was asked.
func (l *loop) stopped() bool {
	select {
	case <-l.quit:
		return true
	default:
		return false
	}
}

// setTimer (re)arms timer id for engine time at; fire runs on the loop.
// A timer moved or cancelled before its old deadline never fires for it.
func (l *loop) setTimer(id engine.TimerID, at engine.Time, fire func(engine.TimerID)) {
	l.cancelTimer(id)
	l.gen++
	gen := l.gen
	d := time.Duration(int64(at) - int64(l.now()))
	lt := &loopTimer{gen: gen}
	lt.t = time.AfterFunc(max(d, 0), func() {
		l.post(func() {
			if cur := l.timers[id]; cur != nil && cur.gen == gen {
				delete(l.timers, id)
				fire(id)
			}
		})
	})
	l.timers[id] = lt
}

// afterFunc runs f on the loop after d of wall time (a driver's own timer,
// not an engine one; it cannot be cancelled, so f checks what it needs).
func (l *loop) afterFunc(d time.Duration, f func()) {
	time.AfterFunc(d, func() { l.post(f) })
}

// cancelTimer disarms timer id; unknown ids are a no-op.
func (l *loop) cancelTimer(id engine.TimerID) {
	if t := l.timers[id]; t != nil {
		t.t.Stop()
		delete(l.timers, id)
	}
}

// pump copies the bytes read from conn to the loop, as onData calls, until
// the connection ends; then it closes conn and posts onClose. It runs on its
// own goroutine, one per connection, and stops early when the loop stops.
func (l *loop) pump(conn net.Conn, onData func([]byte), onClose func()) {
	buf := make([]byte, 32*1024)
	for {
		n, err := conn.Read(buf)
		if n > 0 {
			data := append([]byte(nil), buf[:n]...)
			if !l.post(func() { onData(data) }) {
				return
			}
		}
		if err != nil {
			conn.Close()
			l.post(onClose)
			return
		}
	}
}
