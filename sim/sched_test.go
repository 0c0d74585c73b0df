package sim

import (
	"slices"
	"testing"

	"github.com/mqttlab/mqttlab/engine"
	"pgregory.net/rapid"
)

func TestSchedulerOrder(t *testing.T) {
	var s Scheduler
	for i, at := range []engine.Time{30, 10, 20, 10, 30, 0} {
		s.push(item{at: at, id: uint64(i)})
	}
	var got []uint64
	var times []engine.Time
	for s.Len() > 0 {
		it := s.pop()
		got = append(got, it.id)
		times = append(times, s.Now())
	}
	want := []uint64{5, 1, 3, 2, 0, 4} // by time, then insertion order
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("pop order %v, want %v", got, want)
		}
	}
	for i := 1; i < len(times); i++ {
		if times[i] < times[i-1] {
			t.Fatalf("clock went back: %v", times)
		}
	}
	if s.Now() != 30 {
		t.Errorf("clock %d after the last item, want 30", s.Now())
	}
}

func TestSchedulerNeverSchedulesInThePast(t *testing.T) {
	var s Scheduler
	s.advanceTo(100)
	s.push(item{at: 5})
	if it := s.pop(); it.at != 100 || s.Now() != 100 {
		t.Errorf("item at %d, clock %d; want both 100", it.at, s.Now())
	}
	s.advanceTo(50)
	if s.Now() != 100 {
		t.Errorf("advanceTo moved the clock back to %d", s.Now())
	}
}

func TestSchedulerNoAllocations(t *testing.T) {
	var s Scheduler
	for i := 0; i < 64; i++ {
		s.push(item{at: engine.Time(i)})
	}
	for s.Len() > 0 {
		s.pop()
	}
	allocs := testing.AllocsPerRun(100, func() {
		for i := 0; i < 32; i++ {
			s.push(item{at: s.Now() + engine.Time(i%7)})
		}
		for s.Len() > 0 {
			s.pop()
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per 32 push/pop; want 0", allocs)
	}
}

// TestSchedulerMatchesSortedOrder: any mix of pushes and pops gives each
// item in (time, insertion) order among those scheduled, as a sorted list
// would.
func TestSchedulerMatchesSortedOrder(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		var s Scheduler
		var ref []item // pending items, kept sorted by (at, seq)
		var seq uint64
		steps := rapid.SliceOfN(rapid.IntRange(-1, 40), 1, 300).Draw(rt, "steps")
		for i, d := range steps {
			if d < 0 {
				if len(ref) == 0 {
					continue
				}
				got, want := s.pop(), ref[0]
				ref = ref[1:]
				if got.id != want.id {
					rt.Fatalf("step %d: popped item %d at %d, want item %d at %d", i, got.id, got.at, want.id, want.at)
				}
				continue
			}
			at := max(s.Now()+engine.Time(d), s.Now())
			seq++
			s.push(item{at: at, id: uint64(i)})
			it := item{at: at, seq: seq, id: uint64(i)}
			// After every pending item at the same time or earlier.
			k := len(ref)
			for k > 0 && ref[k-1].at > at {
				k--
			}
			ref = slices.Insert(ref, k, it)
		}
		for len(ref) > 0 {
			if got := s.pop(); got.id != ref[0].id {
				rt.Fatalf("drain: popped item %d, want %d", got.id, ref[0].id)
			}
			ref = ref[1:]
		}
		if s.Len() != 0 {
			rt.Fatalf("%d items left", s.Len())
		}
	})
}
