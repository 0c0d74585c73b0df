package engine

import (
	"reflect"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// TestInflightWindow checks pushInflight and dropInflight against a plain
// slice: the same messages in the same order, every slot of the array
// outside the window zero (no stale message kept alive), and the array
// never larger than twice the most messages ever held at once.
func TestInflightWindow(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var s brokerSession
		var model []uint16
		most, next := 0, uint16(1)
		for range rapid.IntRange(0, 200).Draw(t, "ops") {
			if len(model) == 0 || rapid.Bool().Draw(t, "push") {
				s.pushInflight(brokerOut{id: next, key: "k", msg: brokerMsg{buf: []byte{1}}})
				model = append(model, next)
				next++
				most = max(most, len(model))
			} else {
				i := 0
				if !rapid.Bool().Draw(t, "oldest") {
					i = rapid.IntRange(0, len(model)-1).Draw(t, "i")
				}
				s.dropInflight(i)
				model = slices.Delete(model, i, i+1)
			}
			got := make([]uint16, len(s.inflight))
			for i := range s.inflight {
				got[i] = s.inflight[i].id
			}
			if !slices.Equal(got, model) {
				t.Fatalf("inflight ids %v, want %v", got, model)
			}
			checkWindow(t, s.inflBase, s.inflight, most)
		}
	})
}

// TestQueueWindow checks pushQueue with pops from the front (as pump and
// DropOldest take them) against a plain slice: the same messages in order,
// every slot of the array outside the window zero, and the array never
// larger than twice the most messages ever queued at once.
func TestQueueWindow(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var s brokerSession
		var model []uint16
		most, next := 0, uint16(1)
		for range rapid.IntRange(0, 300).Draw(t, "ops") {
			if len(model) == 0 || rapid.Bool().Draw(t, "push") {
				s.pushQueue(brokerOut{seq: uint64(next), key: "k", msg: brokerMsg{buf: []byte{1}}})
				model = append(model, next)
				next++
				most = max(most, len(model))
			} else {
				s.queue[0] = brokerOut{}
				s.queue = s.queue[1:]
				model = model[1:]
			}
			got := make([]uint16, len(s.queue))
			for i := range s.queue {
				got[i] = uint16(s.queue[i].seq)
			}
			if !slices.Equal(got, model) {
				t.Fatalf("queued %v, want %v", got, model)
			}
			checkWindow(t, s.queueBase, s.queue, most)
		}
	})
}

// checkWindow checks a slice kept as a window at the end of its base array:
// the window ends where the array does, every slot outside it is zero (no
// reference kept alive), and the array is never larger than twice the most
// elements held at once, plus 8.
func checkWindow[T any](t *rapid.T, base, window []T, most int) {
	all := base[:cap(base)]
	start := cap(base) - cap(window)
	if len(window) > 0 && &all[start] != &window[0] {
		t.Fatalf("the window does not end at the end of the array")
	}
	for j := range all {
		if (j < start || j >= start+len(window)) && !reflect.ValueOf(all[j]).IsZero() {
			t.Fatalf("slot %d outside the window holds %+v", j, all[j])
		}
	}
	if cap(base) > 2*most+8 {
		t.Fatalf("array of %d for at most %d messages", cap(base), most)
	}
}
