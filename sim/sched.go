package sim

import (
	"container/heap"

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
type item struct {
	at   engine.Time
	seq  uint64
	kind evKind
	node int32  // node index
	side uint8  // connection side or direction
	conn uint64 // connection id
	gen  uint64 // node incarnation or timer generation
	id   uint64 // timer id
}

// itemHeap is a container/heap of items ordered by (at, seq). Push and Pop
// exist for heap.Interface; the scheduler appends and truncates itself and
// calls heap.Fix, which never boxes an item.
type itemHeap []item

func (h itemHeap) Len() int { return len(h) }
func (h itemHeap) Less(i, j int) bool {
	if h[i].at != h[j].at {
		return h[i].at < h[j].at
	}
	return h[i].seq < h[j].seq
}
func (h itemHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *itemHeap) Push(x any)   { *h = append(*h, x.(item)) }
func (h *itemHeap) Pop() any {
	old := *h
	n := len(old) - 1
	it := old[n]
	*h = old[:n]
	return it
}

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
	// Append then Fix rather than heap.Push: boxing an item into an
	// interface would allocate on every event.
	s.h = append(s.h, it)
	heap.Fix(&s.h, len(s.h)-1)
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
		heap.Fix(&s.h, 0)
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
