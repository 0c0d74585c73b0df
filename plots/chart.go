package plots

import (
	"errors"
	"fmt"
	"io"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	_ "gonum.org/v1/plot/vg/vgimg" // registers the "png" format
	_ "gonum.org/v1/plot/vg/vgsvg" // registers the "svg" format
)

// ErrEmptySweep is returned when a chart is asked of a sweep with no points.
var ErrEmptySweep = errors.New("plots: sweep has no points")

// Chart size.
const (
	chartWidth  = 7 * vg.Inch
	chartHeight = 4.5 * vg.Inch
)

// Chart formats WriteChart accepts.
const (
	FormatPNG = "png"
	FormatSVG = "svg"
)

// dodge is the fraction of the x range that neighbouring variants are moved
// apart on the chart, so their error bars do not hide each other. The CSV
// keeps the true x.
const dodge = 0.008

// Chart builds the plot of a sweep: per variant, a line through the failure
// rates with a glyph per point and the 95% Wilson interval as a vertical
// error bar; both axes in percent, a title and a legend.
func Chart(s Sweep) (*plot.Plot, error) {
	if len(s.Points) == 0 {
		return nil, fmt.Errorf("%w: %s", ErrEmptySweep, s.Name)
	}
	p := plot.New()
	p.Title.Text = s.Title
	p.X.Label.Text = s.XLabel + " (%)"
	p.Y.Label.Text = s.YLabel + " (%)"
	p.Title.Padding = vg.Points(8)
	p.Legend.Top = true
	p.Legend.Left = true
	p.Legend.XOffs = vg.Points(8)
	p.Legend.YOffs = -vg.Points(4)
	p.Add(plotter.NewGrid())
	variants := s.Variants()
	shift := dodgeStep(s, len(variants))
	for i, v := range variants {
		off := (float64(i) - float64(len(variants)-1)/2) * shift
		if err := addSeries(p, i, s.label(v), s.Series(v), off); err != nil {
			return nil, fmt.Errorf("plots: chart of %s, variant %s: %w", s.Name, v, err)
		}
	}
	pad := (p.X.Max - p.X.Min) * 0.03
	p.X.Min, p.X.Max = p.X.Min-pad, p.X.Max+pad
	p.Y.Min = 0
	p.Y.Max = math.Min(100, math.Max(p.Y.Max*1.05, 1))
	return p, nil
}

// dodgeStep is the x distance, in percent, between neighbouring variants.
func dodgeStep(s Sweep, n int) float64 {
	if n < 2 {
		return 0
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, pt := range s.Points {
		lo, hi = math.Min(lo, pt.X), math.Max(hi, pt.X)
	}
	return (hi - lo) * 100 * dodge
}

// errPoints is a series in percent with asymmetric y errors.
type errPoints struct {
	plotter.XYs
	plotter.YErrors
}

// addSeries adds one variant's line, glyphs, error bars and legend entry.
func addSeries(p *plot.Plot, i int, label string, pts []Point, off float64) error {
	data := seriesData(pts, off)
	line, marks, err := plotter.NewLinePoints(data.XYs)
	if err != nil {
		return err
	}
	bars, err := plotter.NewYErrorBars(data)
	if err != nil {
		return err
	}
	style(i, line, marks, bars)
	p.Add(line, marks, bars)
	p.Legend.Add(label, line, marks)
	return nil
}

// seriesData converts points to percent, x moved by off, with the Wilson
// interval as errors below and above the rate.
func seriesData(pts []Point, off float64) errPoints {
	data := errPoints{XYs: make(plotter.XYs, len(pts)), YErrors: make(plotter.YErrors, len(pts))}
	for k, pt := range pts {
		data.XYs[k].X = pt.X*100 + off
		data.XYs[k].Y = pt.Rate * 100
		data.YErrors[k].Low = (pt.Rate - pt.Lo) * 100
		data.YErrors[k].High = (pt.Hi - pt.Rate) * 100
	}
	return data
}

// style gives series i its own colour, dash pattern and glyph.
func style(i int, line *plotter.Line, marks *plotter.Scatter, bars *plotter.YErrorBars) {
	c := plotutil.Color(i)
	line.LineStyle = draw.LineStyle{Color: c, Width: vg.Points(1.5), Dashes: plotutil.Dashes(i)}
	marks.GlyphStyle = draw.GlyphStyle{Color: c, Radius: vg.Points(3), Shape: plotutil.Shape(i)}
	bars.LineStyle = draw.LineStyle{Color: c, Width: vg.Points(1)}
}

// WriteChart renders the chart of a sweep to w in format "png" or "svg".
func WriteChart(w io.Writer, s Sweep, format string) error {
	if format != FormatPNG && format != FormatSVG {
		return fmt.Errorf("plots: chart format %q: want %q or %q", format, FormatPNG, FormatSVG)
	}
	p, err := Chart(s)
	if err != nil {
		return err
	}
	wt, err := p.WriterTo(chartWidth, chartHeight, format)
	if err != nil {
		return fmt.Errorf("plots: rendering %s as %s: %w", s.Name, format, err)
	}
	if _, err := wt.WriteTo(w); err != nil {
		return fmt.Errorf("plots: writing %s as %s: %w", s.Name, format, err)
	}
	return nil
}
