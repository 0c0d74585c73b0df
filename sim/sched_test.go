package sim

import (
	"testing"

	"github.com/mqttlab/mqttlab/engine"
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
