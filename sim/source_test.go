package sim

import "testing"

// zeroSource always draws zero: the benign choice everywhere.
type zeroSource struct{}

func (zeroSource) Uint64() uint64 { return 0 }

// maxSource always draws the largest value: the hostile choice everywhere.
type maxSource struct{}

func (maxSource) Uint64() uint64 { return ^uint64(0) }

func TestZeroDrawIsBenign(t *testing.T) {
	r := NewRand(zeroSource{})
	if r.Chance(999_999, 1_000_000) {
		t.Error("Chance with a zero draw is true")
	}
	if r.PPM(999_999) {
		t.Error("PPM with a zero draw is true")
	}
	if got := r.IntN(17); got != 0 {
		t.Errorf("IntN(17) = %d with a zero draw", got)
	}
	if got := r.Between(5, 10); got != 5 {
		t.Errorf("Between(5,10) = %d with a zero draw", got)
	}
	if got := Pick(r, []string{"first", "second"}); got != "first" {
		t.Errorf("Pick = %q with a zero draw", got)
	}
}

func TestMaxDrawFiresEverything(t *testing.T) {
	r := NewRand(maxSource{})
	if !r.PPM(1) {
		t.Error("PPM(1) false with the largest draw")
	}
	if got := r.IntN(17); got != 16 {
		t.Errorf("IntN(17) = %d with the largest draw", got)
	}
	if got := r.Between(5, 10); got != 10 {
		t.Errorf("Between(5,10) = %d with the largest draw", got)
	}
}

func TestZeroProbabilityNeverDraws(t *testing.T) {
	r := NewRand(maxSource{})
	if r.PPM(0) || r.Chance(0, 10) {
		t.Error("a zero probability fired")
	}
	if !r.Chance(10, 10) {
		t.Error("a certain chance did not fire")
	}
	if r.Draws() != 0 {
		t.Errorf("%d draws for probabilities 0 and 1; want none", r.Draws())
	}
}

func TestByteSource(t *testing.T) {
	s := NewByteSource([]byte{0x00, 0xff, 0x80})
	want := []uint64{0, ^uint64(0), 0x8080808080808080, 0, 0}
	for i, w := range want {
		if got := s.Uint64(); got != w {
			t.Errorf("draw %d = %#x, want %#x", i, got, w)
		}
	}
	if s.Used() != 3 {
		t.Errorf("Used = %d, want 3", s.Used())
	}
	r := NewRand(NewByteSource([]byte{0xff}))
	if !r.PPM(1) {
		t.Error("byte 0xff does not fire a 1 ppm fault")
	}
}

func TestIntNDistribution(t *testing.T) {
	r := NewRand(NewPCGSource(7))
	var counts [4]int
	for i := 0; i < 4000; i++ {
		counts[r.IntN(4)]++
	}
	for v, c := range counts {
		if c < 800 || c > 1200 {
			t.Errorf("IntN(4) gave %d %d times in 4000 draws", v, c)
		}
	}
}

func TestPCGDeterministic(t *testing.T) {
	a, b := NewPCGSource(42), NewPCGSource(42)
	for i := 0; i < 100; i++ {
		if a.Uint64() != b.Uint64() {
			t.Fatalf("draw %d differs for the same seed", i)
		}
	}
	if NewPCGSource(1).Uint64() == NewPCGSource(2).Uint64() {
		t.Error("seeds 1 and 2 give the same first draw")
	}
}
