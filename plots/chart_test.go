package plots

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"image/png"
	"io"
	"math"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/recorder"
)

// fakeSweep measures the fake experiment with a few trials.
func fakeSweep(t *testing.T) Sweep {
	t.Helper()
	s, err := Measure(fakeExperiment(), Config{Trials: 20, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestChartPNGDecodes checks that the PNG chart is a PNG of the chart size.
func TestChartPNGDecodes(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteChart(&buf, fakeSweep(t), FormatPNG); err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(&buf)
	if err != nil {
		t.Fatalf("PNG does not decode: %v", err)
	}
	b := img.Bounds()
	if b.Dx() < 400 || b.Dy() < 250 || b.Dx() <= b.Dy() {
		t.Errorf("PNG is %dx%d, want a landscape chart at least 400x250", b.Dx(), b.Dy())
	}
}

// TestChartSVGParses checks that the SVG chart is well-formed XML whose
// root is <svg> and whose text carries the title, both axis labels with
// their unit and every legend label.
func TestChartSVGParses(t *testing.T) {
	var buf bytes.Buffer
	s := fakeSweep(t)
	if err := WriteChart(&buf, s, FormatSVG); err != nil {
		t.Fatal(err)
	}
	root, text := parseSVG(t, buf.Bytes())
	if root != "svg" {
		t.Errorf("root element %q, want svg", root)
	}
	want := []string{s.Title, s.XLabel + " (%)", s.YLabel + " (%)", "legacy behaviour", "fixed behaviour", Caption(s)}
	if !containsAll(text, want...) {
		t.Errorf("SVG text %q lacks one of %q", text, want)
	}
}

// parseSVG decodes every token of an SVG document and returns the name of
// its root element and all its character data.
func parseSVG(t *testing.T, data []byte) (root, text string) {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(data))
	var sb strings.Builder
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("SVG does not parse: %v", err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			if root == "" {
				root = tok.Name.Local
			}
		case xml.CharData:
			sb.Write(tok)
			sb.WriteByte('\n')
		}
	}
	return root, sb.String()
}

// TestChartErrors checks that an empty sweep and an unknown format are
// errors.
func TestChartErrors(t *testing.T) {
	if err := WriteChart(io.Discard, Sweep{Name: "empty"}, FormatPNG); !errors.Is(err, ErrEmptySweep) {
		t.Errorf("empty sweep: error %v, want ErrEmptySweep", err)
	}
	if err := WriteChart(io.Discard, fakeSweep(t), "gif"); err == nil || !strings.Contains(err.Error(), `"gif"`) {
		t.Errorf("format gif: error %v, want one naming the format", err)
	}
}

// TestChartAxes checks that the rate axis starts just below 0 (glyphs at 0
// are not cut by the axis) with no negative tick and stays within 100%.
func TestChartAxes(t *testing.T) {
	p, err := Chart(fakeSweep(t))
	if err != nil {
		t.Fatal(err)
	}
	if p.Y.Min >= 0 || p.Y.Min < -0.05*p.Y.Max || p.Y.Max > 100 || p.Y.Max < 1 {
		t.Errorf("y axis [%v, %v], want from just below 0 to between 1 and 100", p.Y.Min, p.Y.Max)
	}
	for _, tick := range p.Y.Tick.Marker.Ticks(p.Y.Min, p.Y.Max) {
		if tick.Value < 0 {
			t.Errorf("negative y tick %+v", tick)
		}
	}
}

// TestChartXTicksAtValues: the swept values sit evenly spaced, one slot
// each, every one with a tick labelled by its value in percent (the fake
// sweeps 0, 1, 5 and 10%, crowded near 0 on a linear axis).
func TestChartXTicksAtValues(t *testing.T) {
	p, err := Chart(fakeSweep(t))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tick := range p.X.Tick.Marker.Ticks(p.X.Min, p.X.Max) {
		if tick.Label != "" {
			got = append(got, fmt.Sprintf("%v:%s", tick.Value, tick.Label))
		}
	}
	if want := []string{"0:0", "1:1", "2:5", "3:10"}; !slices.Equal(got, want) {
		t.Errorf("x ticks %q, want %q", got, want)
	}
	if p.X.Min != -0.5 || p.X.Max != 3.5 {
		t.Errorf("x axis [%v, %v], want [-0.5, 3.5]: half a slot either side", p.X.Min, p.X.Max)
	}
}

// TestChartIdenticalSeriesApart: two variants with the same points must
// not hide each other: at every point their glyphs are at least a glyph's
// radius apart on the page.
func TestChartIdenticalSeriesApart(t *testing.T) {
	s := fakeSweep(t)
	var same []Point
	for _, pt := range s.Series("legacy") {
		same = append(same, pt)
		pt.Variant = "fixed"
		same = append(same, pt)
	}
	s.Points = same
	p, err := Chart(s)
	if err != nil {
		t.Fatal(err)
	}
	// The data area is at least 80% of the chart's width.
	minGap := float64(vg.Points(3.5)) / float64(chartWidth*0.8)
	var glyphs []plot.GlyphBox // in series order: legacy, fixed
	for _, b := range p.GlyphBoxes(p) {
		if b.Size().X == 2*vg.Points(3.5) { // not an error bar's cap
			glyphs = append(glyphs, b)
		}
	}
	if len(glyphs) != 8 {
		t.Fatalf("%d glyphs, want 2 series of 4", len(glyphs))
	}
	for k, b := range glyphs[:4] {
		c := glyphs[4+k]
		if b.Y != c.Y || math.Abs(b.X-c.X) < minGap {
			t.Errorf("point %d: legacy at (%.4f, %.4f), fixed at (%.4f, %.4f): want the same y and x at least %.4f apart", k, b.X, b.Y, c.X, c.Y, minGap)
		}
	}
}

// TestChartLegendOnBox records the drawing of a chart: the legend's labels
// are drawn inside a white box filled after the series (so grid lines and
// series do not run through the legend), and the caption is drawn.
func TestChartLegendOnBox(t *testing.T) {
	s := fakeSweep(t)
	p, err := Chart(s)
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder.Canvas{}
	drawChart(draw.NewCanvas(rec, chartWidth, chartHeight), p, Caption(s))
	white, box, firstLabel, strokes := false, -1, -1, 0
	var boxRect vg.Rectangle
	for i, a := range rec.Actions {
		switch a := a.(type) {
		case *recorder.SetColor:
			white = false
			if a.Color != nil {
				r, g, b, al := a.Color.RGBA()
				white = r == 0xffff && g == 0xffff && b == 0xffff && al == 0xffff
			}
		case *recorder.Stroke:
			strokes++
		case *recorder.Fill:
			if white && i > 1 && strokes > 0 && firstLabel < 0 {
				box, boxRect = i, bounds(a.Path)
			}
		case *recorder.FillString:
			if a.String == s.label("legacy") || a.String == s.label("fixed") {
				if firstLabel < 0 {
					firstLabel = i
				}
				if box < 0 || a.Point.X < boxRect.Min.X || a.Point.X > boxRect.Max.X || a.Point.Y < boxRect.Min.Y || a.Point.Y > boxRect.Max.Y {
					t.Errorf("label %q at %v is not inside a white box drawn over the series (box %v)", a.String, a.Point, boxRect)
				}
			}
		}
	}
	if firstLabel < 0 {
		t.Fatal("no legend label drawn")
	}
	if !slices.ContainsFunc(rec.Actions, func(a recorder.Action) bool {
		fs, ok := a.(*recorder.FillString)
		return ok && strings.Contains(fs.String, "95% Wilson intervals, n = 20 runs per point")
	}) {
		t.Error("no caption drawn")
	}
}

// bounds is the bounding box of a path's points.
func bounds(path vg.Path) vg.Rectangle {
	r := vg.Rectangle{Min: path[0].Pos, Max: path[0].Pos}
	for _, c := range path {
		if c.Type == vg.MoveComp || c.Type == vg.LineComp {
			r.Min.X, r.Min.Y = min(r.Min.X, c.Pos.X), min(r.Min.Y, c.Pos.Y)
			r.Max.X, r.Max.Y = max(r.Max.X, c.Pos.X), max(r.Max.Y, c.Pos.Y)
		}
	}
	return r
}

// TestCaption states the interval and the runs per point, from the data.
func TestCaption(t *testing.T) {
	s := fakeSweep(t)
	if got := Caption(s); !strings.HasPrefix(got, "95% Wilson intervals, n = 20 runs per point.") {
		t.Errorf("caption %q", got)
	}
	s.Points[1].Trials = 200
	if got := Caption(s); !strings.HasPrefix(got, "95% Wilson intervals, n = 20–200 runs per point.") {
		t.Errorf("caption of mixed counts %q", got)
	}
}

// TestSeriesData checks the plotted data: x the slot of the value moved by
// the series' offset, the rate in percent, and the error bar spanning the
// Wilson interval.
func TestSeriesData(t *testing.T) {
	pts := []Point{
		{X: 0.02, Rate: 0.25, Lo: 0.1, Hi: 0.45},
		{X: 0, Rate: 0, Lo: 0, Hi: 0.3},
	}
	d := slotData(pts, []float64{0, 0.02}, 0.5)
	want := []struct{ x, y, low, high float64 }{{1.5, 25, 15, 20}, {0.5, 0, 0, 30}}
	for k, w := range want {
		x, y := d.XY(k)
		low, high := d.YError(k)
		if !near(x, w.x) || !near(y, w.y) || !near(low, w.low) || !near(high, w.high) {
			t.Errorf("point %d = (%v, %v -%v +%v), want (%v, %v -%v +%v)", k, x, y, low, high, w.x, w.y, w.low, w.high)
		}
	}
}

// near reports whether two floats agree to 1e-9.
func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }
