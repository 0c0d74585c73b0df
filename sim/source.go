package sim

import (
	"math/bits"
	"math/rand/v2"
)

// Source is where every decision of a world comes from. It is
// math/rand/v2.Source: one method, Uint64, so a PCG, a fuzzer's bytes or a
// rapid generator (in package properties) can all drive a world. A zero draw
// always selects the benign choice: no fault, the shortest delay, the first
// candidate. A source that only returns zeros gives a fault-free run, so
// shrinking the draws towards zero shrinks runs towards simple ones.
type Source = rand.Source

// Stream numbers of the PCG sources derived from one seed: the profile, the
// plan and the run draw from independent streams, so a plan edited by hand
// (or shrunk) replays with the same run-time draws.
const (
	streamProfile uint64 = 0x9e3779b97f4a7c15
	streamPlan    uint64 = 0xbf58476d1ce4e5b9
	streamRun     uint64 = 0x94d049bb133111eb
	// streamFeatures feeds the swarm workload's later dimensions (shared
	// subscriptions, Subscription Identifiers): a seed that draws them
	// off keeps the plan it had before they existed.
	streamFeatures uint64 = 0xd6e8feb86659fd93
	// streamWrap feeds the swarm's wrap dimension (whether a seed wraps
	// its packet ids, and where each counter starts): a seed that draws it
	// off keeps the plan it had with wrap pinned off.
	streamWrap uint64 = 0x8cb92ba72f3d8dd7
	// streamMore feeds the swarm's dimensions of issue 21 (exhaust,
	// aliases, dollar, ...): a seed that draws them all off keeps the plan
	// it had before they existed.
	streamMore uint64 = 0x2545f4914f6cdd1d
	// streamBrokerMax feeds the swarm's brokermax dimension (whether a
	// seed bounds the broker's Maximum Packet Size, and to what): a seed
	// that draws it off keeps its plan.
	streamBrokerMax uint64 = 0x4cf5ad432745937f
	// streamOptions feeds the swarm's broker options (queue, serverka): a
	// seed that draws them off keeps the plan it had before they existed.
	streamOptions uint64 = 0x6a09e667f3bcc909
	// streamAccess feeds the swarm's access dimension (whether a seed
	// gives the broker an ACL, and its rules): a seed that draws it off
	// keeps its plan.
	streamAccess uint64 = 0x1d8e4e27c47d124f
)

// NewPCGSource returns the ordinary source of a seed: a PCG.
func NewPCGSource(seed uint64) Source { return rand.NewPCG(seed, streamRun) }

// ByteSource draws from a byte slice, one byte per draw, and returns zeros
// once the bytes are used up. The byte is spread over all 64 bits, so byte b
// selects about b/255 of any range: 0x00 is the benign choice and 0xff the
// most hostile (it fires any fault probability).
type ByteSource struct {
	data []byte
	pos  int
}

// NewByteSource returns a source that draws from data (for fuzzing).
func NewByteSource(data []byte) *ByteSource { return &ByteSource{data: data} }

// Uint64 implements Source.
func (s *ByteSource) Uint64() uint64 {
	if s.pos >= len(s.data) {
		return 0
	}
	b := uint64(s.data[s.pos])
	s.pos++
	return b * 0x0101010101010101
}

// Used reports how many bytes have been drawn.
func (s *ByteSource) Used() int { return s.pos }

// Rand wraps a Source with the few helpers a world needs. Every helper maps a
// zero draw to the benign result. It uses no floats.
type Rand struct {
	src   Source
	pcg   *rand.PCG // src when it is a PCG: called directly, not through the interface
	draws uint64
}

// NewRand wraps src.
func NewRand(src Source) *Rand {
	pcg, _ := src.(*rand.PCG)
	return &Rand{src: src, pcg: pcg}
}

// Uint64 returns the next raw draw.
func (r *Rand) Uint64() uint64 {
	r.draws++
	if r.pcg != nil {
		return r.pcg.Uint64()
	}
	return r.src.Uint64()
}

// Draws reports how many draws were made.
func (r *Rand) Draws() uint64 { return r.draws }

// IntN returns a number in [0, n): the high word of draw*n, so a zero draw
// gives 0. n <= 0 gives 0 without drawing.
func (r *Rand) IntN(n int) int {
	if n <= 1 {
		return 0
	}
	hi, _ := bits.Mul64(r.Uint64(), uint64(n))
	return int(hi)
}

// Chance reports true with probability num/den. A zero draw gives false; a
// probability of zero never draws, so fault-free profiles consume no draws.
func (r *Rand) Chance(num, den int) bool {
	if num <= 0 || den <= 0 {
		return false
	}
	if num >= den {
		return true
	}
	return r.IntN(den) >= den-num
}

// PPM reports true with probability ppm per million.
func (r *Rand) PPM(ppm int) bool {
	if ppm <= 0 { // the common zero probability, without a call
		return false
	}
	return r.Chance(ppm, 1_000_000)
}

// Between returns a number in [lo, hi]; a zero draw gives lo. hi <= lo gives
// lo without drawing.
func (r *Rand) Between(lo, hi int64) int64 {
	if hi <= lo {
		return lo
	}
	return lo + int64(r.IntN(int(hi-lo+1)))
}

// Pick returns an index into a list of n candidates; a zero draw gives 0.
func Pick[T any](r *Rand, list []T) T {
	return list[r.IntN(len(list))]
}

// newPCG returns a Rand over the PCG of seed on one stream.
func newPCG(seed, stream uint64) *Rand { return NewRand(rand.NewPCG(seed, stream)) }
