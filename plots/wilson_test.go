package plots

import (
	"errors"
	"math"
	"testing"
)

// TestWilsonKnownValues checks the interval against published values: the
// score-method column of Newcombe (1998), "Two-sided confidence intervals for
// the single proportion", Table I, given to four decimals, and two textbook
// cases.
func TestWilsonKnownValues(t *testing.T) {
	cases := []struct {
		k, n      int
		rate      float64
		wantLo    float64
		wantHi    float64
		tolerance float64
	}{
		{81, 263, 81.0 / 263, 0.2553, 0.3662, 6e-5},
		{15, 148, 15.0 / 148, 0.0624, 0.1605, 6e-5},
		{0, 20, 0, 0, 0.1611, 6e-5},
		{1, 29, 1.0 / 29, 0.0061, 0.1718, 6e-5},
		{0, 10, 0, 0, 0.2775, 6e-5},
		{5, 10, 0.5, 0.2366, 0.7634, 6e-5},
		{10, 10, 1, 0.7225, 1, 6e-5},
		{1, 1, 1, 0.2065, 1, 6e-5},
	}
	for _, c := range cases {
		rate, lo, hi, err := Wilson(c.k, c.n)
		if err != nil {
			t.Fatalf("Wilson(%d, %d): %v", c.k, c.n, err)
		}
		if rate != c.rate {
			t.Errorf("Wilson(%d, %d) rate = %v, want %v", c.k, c.n, rate, c.rate)
		}
		if math.Abs(lo-c.wantLo) > c.tolerance || math.Abs(hi-c.wantHi) > c.tolerance {
			t.Errorf("Wilson(%d, %d) = [%.5f, %.5f], want [%.4f, %.4f]", c.k, c.n, lo, hi, c.wantLo, c.wantHi)
		}
	}
}

// TestWilsonShape checks, for every count up to 60 trials, that the interval
// holds the rate, stays in [0, 1] and mirrors: the interval of k failures is
// one minus the interval of n-k.
func TestWilsonShape(t *testing.T) {
	for n := 1; n <= 60; n++ {
		for k := 0; k <= n; k++ {
			rate, lo, hi, err := Wilson(k, n)
			if err != nil {
				t.Fatalf("Wilson(%d, %d): %v", k, n, err)
			}
			if !(0 <= lo && lo <= rate && rate <= hi && hi <= 1) {
				t.Fatalf("Wilson(%d, %d) = %v in [%v, %v]: not ordered in [0, 1]", k, n, rate, lo, hi)
			}
			_, mlo, mhi, _ := Wilson(n-k, n)
			if math.Abs(lo-(1-mhi)) > 1e-12 || math.Abs(hi-(1-mlo)) > 1e-12 {
				t.Fatalf("Wilson(%d, %d) = [%v, %v] does not mirror Wilson(%d, %d) = [%v, %v]", k, n, lo, hi, n-k, n, mlo, mhi)
			}
		}
	}
}

// TestWilsonBadCounts checks that impossible counts are errors, not panics
// or NaNs.
func TestWilsonBadCounts(t *testing.T) {
	for _, c := range []struct{ k, n int }{{0, 0}, {1, 0}, {-1, 5}, {6, 5}, {0, -3}} {
		if _, _, _, err := Wilson(c.k, c.n); !errors.Is(err, ErrBadCount) {
			t.Errorf("Wilson(%d, %d) error = %v, want ErrBadCount", c.k, c.n, err)
		}
	}
}
