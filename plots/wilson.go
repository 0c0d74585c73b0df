package plots

import (
	"errors"
	"fmt"
	"math"
)

// ErrBadCount is returned for a failure count or trial count that cannot be
// turned into a proportion.
var ErrBadCount = errors.New("plots: bad count")

// z95 is the two-sided 95% standard normal quantile, Φ⁻¹(0.975).
const z95 = 1.959963984540054

// Wilson returns the observed rate failures/trials and its 95% Wilson score
// interval [lo, hi], all in [0, 1]. It needs trials > 0 and
// 0 <= failures <= trials.
func Wilson(failures, trials int) (rate, lo, hi float64, err error) {
	if trials <= 0 {
		return 0, 0, 0, fmt.Errorf("%w: %d trials, need at least 1", ErrBadCount, trials)
	}
	if failures < 0 || failures > trials {
		return 0, 0, 0, fmt.Errorf("%w: %d failures out of %d trials", ErrBadCount, failures, trials)
	}
	n := float64(trials)
	p := float64(failures) / n
	z2 := float64(z95 * z95)
	denom := float64(1 + z2/n)
	center := float64(p+z2/(2*n)) / denom
	half := z95 * math.Sqrt(float64(p*(1-p)/n)+float64(z2/(4*n*n))) / denom
	lo = math.Max(0, float64(center-half))
	hi = math.Min(1, float64(center+half))
	if failures == 0 {
		lo = 0 // exact: the formula gives 0 up to rounding
	}
	if failures == trials {
		hi = 1
	}
	return p, lo, hi, nil
}
