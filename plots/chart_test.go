package plots

import (
	"bytes"
	"encoding/xml"
	"errors"
	"image/png"
	"io"
	"strings"
	"testing"
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
	want := []string{s.Title, s.XLabel + " (%)", s.YLabel + " (%)", "legacy behaviour", "fixed behaviour"}
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

// TestChartAxes checks that the rate axis runs from 0 and stays within
// 100%.
func TestChartAxes(t *testing.T) {
	p, err := Chart(fakeSweep(t))
	if err != nil {
		t.Fatal(err)
	}
	if p.Y.Min != 0 || p.Y.Max > 100 || p.Y.Max < 1 {
		t.Errorf("y axis [%v, %v], want from 0 to between 1 and 100", p.Y.Min, p.Y.Max)
	}
}

// TestSeriesData checks the plotted data: x and rate in percent, x moved by
// the dodge offset, and the error bar spanning the Wilson interval.
func TestSeriesData(t *testing.T) {
	pts := []Point{
		{X: 0.02, Rate: 0.25, Lo: 0.1, Hi: 0.45},
		{X: 0, Rate: 0, Lo: 0, Hi: 0.3},
	}
	d := seriesData(pts, 0.5)
	want := []struct{ x, y, low, high float64 }{{2.5, 25, 15, 20}, {0.5, 0, 0, 30}}
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
