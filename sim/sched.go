package sim

import (
	"github.com/mqttlab/mqttlab/engine"
)

// evKind is what a scheduled item does when its time comes.
type evKind uint8

// Scheduled item kinds.
const (
	evDeliver   evKind = iota + 1 // deliver due bytes of one direction of a connection
	evCloseSeen                   // one side of a connection sees it closed
	evOpen                        // a dial completes: both sides see the connection open
	evTimer                       // an engine timer fires
	evRestart                     // a crashed node restarts on its own
	evReconnect                   // a client's reconnect backoff ends
)

// item is one scheduled thing. It is a value (no pointers to chase, no
// allocation per event); stale items are recognised by generation numbers.
// Fields are ordered by size (48 bytes, no padding to move).
type item struct {
	at   engine.Time
	seq  uint64
	conn uint64 // connection id
	gen  uint64 // node incarnation or timer generation
	id   uint64 // timer id
	node int32  // node index
	kind evKind
	side uint8 // connection side or direction
}

// before reports whether a comes before b: earlier, or as early and
// scheduled first. Sequence numbers are unique, so the order is total and
// any correct heap pops the same sequence.
func (a *item) before(b *item) bool {
	if a.at != b.at {
		return a.at < b.at
	}
	return a.seq < b.seq
}

// itemHeap is a binary min-heap of items ordered by before, written out
// rather than through container/heap: no interface calls per comparison and
// no boxing.
type itemHeap []item

// up restores the heap property from leaf i towards the root.
func (h itemHeap) up(i int) {
	it := h[i]
	for i > 0 {
		parent := (i - 1) / 2
		if !it.before(&h[parent]) {
			break
		}
		h[i] = h[parent]
		i = parent
	}
	h[i] = it
}

// down restores the heap property from the root towards the leaves.
func (h itemHeap) down(i int) {
	n := len(h)
	it := h[i]
	for {
		c := 2*i + 1
		if c >= n {
			break
		}
		if r := c + 1; r < n && h[r].before(&h[c]) {
			c = r
		}
		if !h[c].before(&it) {
			break
		}
		h[i] = h[c]
		i = c
	}
	h[i] = it
}

// schedRoom is the room a scheduler starts with: a standard scenario's world
// has a few dozen items scheduled at its busiest.
const schedRoom = 64

// Scheduler is the virtual clock: a priority queue keyed by (time, sequence).
// The clock jumps straight to the next item; equal times keep insertion order.
type Scheduler struct {
	now engine.Time
	seq uint64
	h   itemHeap
}

// Now reports the virtual time.
func (s *Scheduler) Now() engine.Time { return s.now }

// Len reports how many items are scheduled.
func (s *Scheduler) Len() int { return len(s.h) }

// push schedules it at it.at (never in the past).
func (s *Scheduler) push(it item) {
	if it.at < s.now {
		it.at = s.now
	}
	s.seq++
	it.seq = s.seq
	if s.h == nil {
		s.h = make(itemHeap, 0, schedRoom)
	}
	s.h = append(s.h, it)
	s.h.up(len(s.h) - 1)
}

// peek reports the time of the next item.
func (s *Scheduler) peek() (engine.Time, bool) {
	if len(s.h) == 0 {
		return 0, false
	}
	return s.h[0].at, true
}

// pop removes the next item and moves the clock to its time.
func (s *Scheduler) pop() item {
	it := s.h[0]
	n := len(s.h) - 1
	s.h[0] = s.h[n]
	s.h = s.h[:n]
	if n > 0 {
		s.h.down(0)
	}
	if it.at > s.now {
		s.now = it.at
	}
	return it
}

// advanceTo moves the clock forward to t (never backwards).
func (s *Scheduler) advanceTo(t engine.Time) {
	if t > s.now {
		s.now = t
	}
}
