package plots

import (
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"gonum.org/v1/plot/vg/vgimg"
	_ "gonum.org/v1/plot/vg/vgsvg" // registers the "svg" format
)

// ErrEmptySweep is returned when a chart is asked of a sweep with no points.
var ErrEmptySweep = errors.New("plots: sweep has no points")

// Chart size, and the strip under the chart that holds its caption.
const (
	chartWidth    = 7 * vg.Inch
	chartHeight   = 4.5 * vg.Inch
	captionHeight = 0.3 * vg.Inch
	pngDPI        = 144 // 1008x648 pixels: sharp when a page scales it down
)

// Chart formats WriteChart accepts.
const (
	FormatPNG = "png"
	FormatSVG = "svg"
)

// dodge is the distance, in x slots (the gap between two swept values), by
// which neighbouring variants are moved apart on the chart, so equal series
// and their error bars stay visible side by side. The CSV keeps the true x.
const dodge = 0.1

// headroom is the share of the rate axis kept free above the highest error
// bar, where the legend sits.
const headroom = 0.3

// Chart builds the plot of a sweep: per variant, a line through the failure
// rates with a glyph per point and the 95% Wilson interval as a vertical
// error bar, in a legend with a background. The swept values sit evenly
// spaced on the x axis (they roughly double from one to the next, and 0 has
// no place on a log axis), each with a tick labelled by its value; both axes
// in percent. WriteChart adds the caption (Caption) under it.
func Chart(s Sweep) (*plot.Plot, error) {
	if len(s.Points) == 0 {
		return nil, fmt.Errorf("%w: %s", ErrEmptySweep, s.Name)
	}
	p := plot.New()
	p.Title.Text = s.Title
	p.X.Label.Text = s.XLabel + " (%)"
	p.Y.Label.Text = s.YLabel + " (%)"
	p.Title.Padding = vg.Points(8)
	p.Add(plotter.NewGrid())
	xs := s.xs()
	p.X.Tick.Marker = xTicks(xs)
	p.Y.Tick.Marker = nonNegativeTicks{}
	variants := s.Variants()
	legend := &legendBox{legend: plot.NewLegend()}
	for i, v := range variants {
		off := (float64(i) - float64(len(variants)-1)/2) * dodge
		if err := addSeries(p, legend, i, s.label(v), slotData(s.Series(v), xs, off)); err != nil {
			return nil, fmt.Errorf("plots: chart of %s, variant %s: %w", s.Name, v, err)
		}
	}
	p.Add(legend)
	p.X.Min, p.X.Max = -0.5, float64(len(xs))-0.5
	top := math.Max(maxHi(s)*100, 1)
	p.Y.Max = math.Min(100, top/(1-headroom))
	p.Y.Min = -0.03 * p.Y.Max // glyphs at 0 clear of the axis
	return p, nil
}

// xs returns the sweep's distinct x values in increasing order.
func (s Sweep) xs() []float64 {
	var xs []float64
	for _, pt := range s.Points {
		if !slices.Contains(xs, pt.X) {
			xs = append(xs, pt.X)
		}
	}
	slices.Sort(xs)
	return xs
}

// maxHi is the highest upper interval bound of the sweep.
func maxHi(s Sweep) float64 {
	hi := 0.0
	for _, pt := range s.Points {
		hi = math.Max(hi, pt.Hi)
	}
	return hi
}

// xTicks labels slot i with xs[i] in percent, in its shortest form.
func xTicks(xs []float64) plot.ConstantTicks {
	ticks := make(plot.ConstantTicks, len(xs))
	for i, x := range xs {
		ticks[i] = plot.Tick{Value: float64(i), Label: strconv.FormatFloat(x*100, 'g', -1, 64)}
	}
	return ticks
}

// nonNegativeTicks are gonum's default ticks without those below 0 (the
// axis starts a little below 0 so glyphs at 0 are not cut).
type nonNegativeTicks struct{}

// Ticks returns the default ticks of [min, max] from 0 up.
func (nonNegativeTicks) Ticks(lo, hi float64) []plot.Tick {
	return slices.DeleteFunc(plot.DefaultTicks{}.Ticks(lo, hi), func(t plot.Tick) bool { return t.Value < 0 })
}

// Caption is the line under a chart: the interval and the number of runs
// behind every point ("n = 200 runs per point"; a range if they differ).
func Caption(s Sweep) string {
	lo, hi := math.MaxInt, 0
	for _, pt := range s.Points {
		lo, hi = min(lo, pt.Trials), max(hi, pt.Trials)
	}
	n := strconv.Itoa(lo)
	if hi != lo {
		n += "–" + strconv.Itoa(hi)
	}
	return "95% Wilson intervals, n = " + n + " runs per point. Swept values evenly spaced; series set side by side at each value."
}

// errPoints is a series in percent with asymmetric y errors.
type errPoints struct {
	plotter.XYs
	plotter.YErrors
}

// addSeries adds one variant's line, glyphs, error bars and legend entry.
func addSeries(p *plot.Plot, legend *legendBox, i int, label string, data errPoints) error {
	line, marks, err := plotter.NewLinePoints(data.XYs)
	if err != nil {
		return err
	}
	bars, err := plotter.NewYErrorBars(data)
	if err != nil {
		return err
	}
	style(i, line, marks, bars)
	p.Add(line, bars, marks)
	legend.legend.Add(label, line, marks)
	legend.labels = append(legend.labels, label)
	return nil
}

// slotData converts points to the chart's coordinates: x is the slot of
// the point's value in xs, moved by off; the rate and the Wilson interval
// (as errors below and above it) in percent.
func slotData(pts []Point, xs []float64, off float64) errPoints {
	data := errPoints{XYs: make(plotter.XYs, len(pts)), YErrors: make(plotter.YErrors, len(pts))}
	for k, pt := range pts {
		data.XYs[k].X = float64(slices.Index(xs, pt.X)) + off
		data.XYs[k].Y = pt.Rate * 100
		data.YErrors[k].Low = (pt.Rate - pt.Lo) * 100
		data.YErrors[k].High = (pt.Hi - pt.Rate) * 100
	}
	return data
}

// style gives series i its own colour, dash pattern and glyph; glyphs are
// outlined in white so one drawn over another stays distinct.
func style(i int, line *plotter.Line, marks *plotter.Scatter, bars *plotter.YErrorBars) {
	c := plotutil.Color(i)
	line.LineStyle = draw.LineStyle{Color: c, Width: vg.Points(1.5), Dashes: plotutil.Dashes(i)}
	marks.GlyphStyle = draw.GlyphStyle{Color: c, Radius: vg.Points(3.5), Shape: plotutil.Shape(i)}
	bars.LineStyle = draw.LineStyle{Color: c, Width: vg.Points(1)}
	bars.CapWidth = vg.Points(6)
}

// legendBox draws the legend in the top left corner of the data area on a
// white box with a grey border, over the grid and the series.
type legendBox struct {
	legend plot.Legend
	labels []string
}

// legendMargin is the space between the box and the data area's corner,
// and between the box's border and the entries.
const legendMargin = 6

// Plot draws the box, then the legend inside it.
func (l *legendBox) Plot(c draw.Canvas, _ *plot.Plot) {
	sty := l.legend.TextStyle
	width, entry := vg.Length(0), vg.Length(0)
	for _, label := range l.labels {
		r := sty.Rectangle(" " + label)
		width, entry = max(width, r.Max.X), max(entry, sty.Rectangle(label).Max.Y)
	}
	pad := vg.Points(legendMargin)
	n := vg.Length(len(l.labels))
	box := vg.Rectangle{
		Min: vg.Point{X: c.Min.X + pad, Y: c.Max.Y - pad - 2*pad - n*entry - (n-1)*l.legend.Padding},
		Max: vg.Point{X: c.Min.X + pad + 2*pad + l.legend.ThumbnailWidth + width, Y: c.Max.Y - pad},
	}
	c.SetColor(whiteColor)
	c.Fill(box.Path())
	c.SetLineStyle(draw.LineStyle{Color: greyColor, Width: vg.Points(0.75)})
	c.Stroke(box.Path())
	inner := draw.Canvas{Canvas: c.Canvas, Rectangle: vg.Rectangle{
		Min: vg.Point{X: box.Min.X + pad, Y: box.Min.Y + pad},
		Max: vg.Point{X: box.Max.X - pad, Y: box.Max.Y - pad},
	}}
	l.legend.Top, l.legend.Left = true, true
	l.legend.Draw(inner)
}

// WriteChart renders the chart of a sweep to w in format "png" or "svg",
// with its caption (Caption) in a strip under it.
func WriteChart(w io.Writer, s Sweep, format string) error {
	if format != FormatPNG && format != FormatSVG {
		return fmt.Errorf("plots: chart format %q: want %q or %q", format, FormatPNG, FormatSVG)
	}
	p, err := Chart(s)
	if err != nil {
		return err
	}
	wt, err := newCanvas(format)
	if err != nil {
		return fmt.Errorf("plots: rendering %s as %s: %w", s.Name, format, err)
	}
	drawChart(draw.New(wt), p, Caption(s))
	if _, err := wt.WriteTo(w); err != nil {
		return fmt.Errorf("plots: writing %s as %s: %w", s.Name, format, err)
	}
	return nil
}

// Colours of the chart's background and the legend box's border.
var (
	whiteColor = color.White
	greyColor  = color.Gray{Y: 0x99}
)

// drawChart draws the plot on a white background with the caption in a
// strip under it.
func drawChart(dc draw.Canvas, p *plot.Plot, caption string) {
	dc.SetColor(whiteColor)
	dc.Fill(dc.Rectangle.Path())
	p.Draw(draw.Crop(dc, 0, 0, captionHeight, 0))
	sty := p.X.Label.TextStyle
	sty.Font.Size = vg.Points(10)
	sty.XAlign = draw.XCenter
	dc.FillText(sty, vg.Point{X: dc.Center().X, Y: dc.Min.Y + captionHeight/3}, caption)
}

// newCanvas is a chart-sized canvas of the format: PNG at pngDPI.
func newCanvas(format string) (vg.CanvasWriterTo, error) {
	if format == FormatPNG {
		return vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(chartWidth, chartHeight), vgimg.UseDPI(pngDPI))}, nil
	}
	return draw.NewFormattedCanvas(chartWidth, chartHeight, format)
}
