package plots

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
)

// csvHeader is the first line of every sweep CSV.
var csvHeader = []string{"experiment", "variant", "x", "failures", "trials", "rate", "lo", "hi"}

// WriteCSV writes the sweep as CSV: a header line, then one line per point.
// x is written in the shortest form that reads back exactly; rate, lo and hi
// with six decimals, so the output is the same on every platform.
func WriteCSV(w io.Writer, s Sweep) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(csvHeader); err != nil {
		return fmt.Errorf("plots: writing CSV of %s: %w", s.Name, err)
	}
	for _, p := range s.Points {
		if err := cw.Write(csvRecord(s.Name, p)); err != nil {
			return fmt.Errorf("plots: writing CSV of %s: %w", s.Name, err)
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("plots: writing CSV of %s: %w", s.Name, err)
	}
	return nil
}

// csvRecord formats one point.
func csvRecord(name string, p Point) []string {
	return []string{
		name,
		p.Variant,
		strconv.FormatFloat(p.X, 'g', -1, 64),
		strconv.Itoa(p.Failures),
		strconv.Itoa(p.Trials),
		fixed6(p.Rate),
		fixed6(p.Lo),
		fixed6(p.Hi),
	}
}

// fixed6 formats a proportion with six decimals.
func fixed6(v float64) string { return strconv.FormatFloat(v, 'f', 6, 64) }
