package properties

import (
	"pgregory.net/rapid"

	"github.com/mqttlab/mqttlab/sim"
)

// Chooser makes the choices a generated plan needs. Choice 0 is always the
// simplest one (the first candidate, no fault, the shortest delay), so a
// chooser that shrinks towards zero shrinks plans towards simple ones. Both
// rapid (RapidChooser) and the fuzz package's byte consumer implement it,
// so the property tests and FuzzSimPlan decode plans the same way.
type Chooser interface {
	// Choose returns a number in [0, n); n < 1 counts as 1. label names the
	// choice in logs.
	Choose(label string, n int) int
}

// RapidChooser draws choices from a *rapid.T, so rapid shrinks plans.
type RapidChooser struct{ T *rapid.T }

// Choose implements Chooser.
func (c RapidChooser) Choose(label string, n int) int {
	if n <= 1 {
		return 0
	}
	return rapid.IntRange(0, n-1).Draw(c.T, label)
}

// RapidSource is a sim.Source that draws every world decision from a
// *rapid.T, one byte per draw, spread over 64 bits as sim.ByteSource does:
// 0 is the benign choice, 0xff the most hostile. A run driven by it shrinks
// its faults and delays towards none, but it does not replay with a seed:
// its counterexamples replay only through rapid (-rapid.failfile).
type RapidSource struct {
	T *rapid.T
	n int
}

// Uint64 implements sim.Source.
func (s *RapidSource) Uint64() uint64 {
	s.n++
	return uint64(rapid.Byte().Draw(s.T, "world")) * 0x0101010101010101
}

// Draws reports how many draws the world made.
func (s *RapidSource) Draws() int { return s.n }

var _ sim.Source = (*RapidSource)(nil)

// pick returns one of list, chosen by c.
func pick[E any](c Chooser, label string, list []E) E {
	return list[c.Choose(label, len(list))]
}

// weighted returns the index of the bucket a choice falls in: weights[i] is
// bucket i's share. Bucket 0 is the zero choice.
func weighted(c Chooser, label string, weights []int) int {
	total := 0
	for _, w := range weights {
		total += w
	}
	x := c.Choose(label, total)
	for i, w := range weights {
		if x < w {
			return i
		}
		x -= w
	}
	return len(weights) - 1
}
