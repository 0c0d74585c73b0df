package seqchart_test

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/mqttlab/mqttlab/engine"
	"github.com/mqttlab/mqttlab/model"
	"github.com/mqttlab/mqttlab/seqchart"
	"github.com/mqttlab/mqttlab/sim"
)

var updateDocs = flag.Bool("update-docs", false, "write the chart's screenshot to ../docs/seqchart.png")

// The plans whose charts the test renders: a small failing plan (legacy p1
// crashes right after its QoS 2 PUBLISH of p1-2 is accepted, under a
// partition, and never resends it: NoLoss), and what simrun shrink made of
// it (7 ops). The first one's screenshot is docs/seqchart.png.
const (
	smallPlan  = "testdata/lost-qos2.plan"
	shrunkPlan = "testdata/lost-qos2.min.plan"
)

// runPlan replays a plan file and judges it as simrun does by default (what
// the fixed engine promises under the run's faults).
func runPlan(t *testing.T, path string) (sim.Plan, model.History, []model.Violation) {
	t.Helper()
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := sim.ParsePlan(string(text))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := sim.ConfigOf(plan.Header)
	if err != nil {
		t.Fatal(err)
	}
	r := sim.Run(cfg, plan)
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	h := r.History()
	return plan, h, model.CheckPromised(h, model.FixedPolicy())
}

// chromium finds the browser: skipped locally without it, never under CI.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("chromium not found; CI installs Debian's chromium (apt-get install chromium)")
	}
	t.Skip("chromium not installed (apt-get install chromium); CI runs this test")
	return ""
}

// browser starts headless chromium for the test.
func browser(t *testing.T) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium(t)), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.WindowSize(1400, 1200))
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	ctx, cancelT := context.WithTimeout(ctx, 60*time.Second)
	t.Cleanup(func() { cancelT(); cancel(); cancelA() })
	var mu sync.Mutex
	var thrown []string
	err := chromedp.Listen(ctx, func(ev any) {
		if e, ok := ev.(*runtime.EventExceptionThrown); ok {
			mu.Lock()
			d := e.ExceptionDetails
			msg := d.Text
			if d.Exception != nil {
				msg += " " + d.Exception.Description
			}
			thrown = append(thrown, msg)
			mu.Unlock()
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		for _, x := range thrown {
			t.Errorf("the page threw: %s", x)
		}
	})
	return ctx
}

// writeChart writes a run's chart into dir and returns its file URL.
func writeChart(t *testing.T, dir, name string, r seqchart.Run) string {
	t.Helper()
	var b bytes.Buffer
	if err := seqchart.Write(&b, r); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return "file://" + path
}

// drawnPackets scrolls the whole chart and counts the distinct packets
// drawn on the way (only the part near the window is in the DOM).
const drawnPackets = `(() => {
  const c = document.getElementById('chart'), seen = new Set();
  for (let y = 0; ; y += c.clientHeight) {
    const at = window.seqchart.renderAt(y);
    document.querySelectorAll('g.pkt').forEach(g => seen.add(g.getAttribute('data-p')));
    if (at < y || y > window.seqchart.height()) break;
  }
  return seen.size;
})()`

// sentPackets counts the packets a history recorded (Sent events, and
// Received events with no Sent: none in the simulator's histories).
func sentPackets(h model.History) int {
	n := 0
	for _, e := range h.Events {
		if e.Kind == model.Sent {
			n++
		}
	}
	return n
}

// TestBrowser renders the charts of a small failing plan and of its
// shrunk form in headless chromium: the violation panel comes first and
// names the invariant and the events it cites, there is one arrow per
// recorded packet, and a screenshot is saved. It also opens the chart of a
// standard run (some 3,000 events) and logs how long the page took.
func TestBrowser(t *testing.T) {
	ctx := browser(t)
	dir := t.TempDir()
	for _, path := range []string{shrunkPlan, smallPlan} {
		shot := checkChart(ctx, t, dir, path)
		out := filepath.Join(dir, filepath.Base(path)+".png")
		if *updateDocs && path == smallPlan {
			out = filepath.Join("..", "docs", "seqchart.png")
		}
		if err := os.WriteFile(out, shot, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("screenshot of %s: %s", path, out)
	}
	openLong(ctx, t, dir)
}

// checkChart renders the chart of a plan file, checks its DOM and returns
// its screenshot.
func checkChart(ctx context.Context, t *testing.T, dir, path string) []byte {
	plan, h, vs := runPlan(t, path)
	if len(vs) == 0 || vs[0].Invariant != model.NoLoss {
		t.Fatalf("%s should violate NoLoss first, got %v", path, vs)
	}
	url := writeChart(t, dir, filepath.Base(path)+".html", seqchart.Run{Title: filepath.Base(path) + " · preset legacy · crash-at p1 20",
		Replay: "simrun replay seqchart/" + path, Plan: plan.String(), History: h, Violations: vs})
	if err := chromedp.Do(ctx, chromedp.Navigate(url), chromedp.WaitReady(`body[data-ready="1"]`)); err != nil {
		t.Fatal(err)
	}
	inv := run(ctx, t, chromedp.Text(`#vinv`))
	first := run(ctx, t, chromedp.Evaluate[string](`document.querySelector('header > section, header > div:not(.titlebar)').id`))
	cited := run(ctx, t, chromedp.Evaluate[int](`document.querySelectorAll('#violation .cited li').length`))
	rings := run(ctx, t, chromedp.Evaluate[int](`document.querySelectorAll('g.cite').length`))
	shot := run(ctx, t, chromedp.CaptureScreenshot())
	drawn := run(ctx, t, chromedp.Evaluate[int](drawnPackets))
	if inv != vs[0].Invariant.String() || first != "violation" {
		t.Errorf("%s: violation panel: invariant %q (want %q), first block after the title %q", path, inv, vs[0].Invariant, first)
	}
	if cited != len(vs[0].Events) || rings == 0 {
		t.Errorf("%s: violation panel lists %d cited events (%d ringed in view), the violation cites %d", path, cited, rings, len(vs[0].Events))
	}
	if want := sentPackets(h); drawn != want {
		t.Errorf("%s: %d packet arrows drawn, the history recorded %d packets", path, drawn, want)
	}
	checkInteraction(ctx, t, path)
	return shot
}

// checkInteraction hovers over a PUBLISH arrow (its tooltip names type, id,
// QoS, DUP, both ends and the message) and filters by that message (its
// story lists its packets and app events; other packets dim).
func checkInteraction(ctx context.Context, t *testing.T, path string) {
	pos := run(ctx, t, chromedp.Evaluate[[]float64](`(() => {
	  const d = window.seqchart.data, k = d.packets.findIndex(p => p.ty === 'PUBLISH' && p.r >= 0);
	  window.seqchart.jumpTo(d.packets[k].s);
	  const r = document.querySelector('g.pkt[data-p="' + k + '"] line.hit').getBoundingClientRect();
	  return [r.left + r.width / 2, r.top + r.height / 2, k];
	})()`))
	if err := chromedp.Do(ctx, chromedp.MouseEvent(chromedp.MouseMoved, pos[0], pos[1])); err != nil {
		t.Fatal(err)
	}
	tip := run(ctx, t, chromedp.Evaluate[string](`document.getElementById('tip').innerText`))
	for _, want := range []string{"PUBLISH", "QoS", "DUP", "\u2192", "message p1-", "sent ", "received "} {
		if !strings.Contains(tip, want) {
			t.Errorf("%s: tooltip of a PUBLISH lacks %q: %q", path, want, tip)
		}
	}
	story := run(ctx, t, chromedp.Evaluate[[]int](`(() => {
	  const d = window.seqchart.data, m = d.packets[`+fmt.Sprint(int(pos[2]))+`].m;
	  window.seqchart.setMsg(m);
	  const own = d.packets.filter(p => p.m === m).length + d.marks.filter(k => k.m === m).length;
	  const shown = [...document.querySelectorAll('g.pkt')].filter(g => !g.classList.contains('dim'))
	    .every(g => d.packets[+g.getAttribute('data-p')].m === m);
	  const n = document.querySelectorAll('ul.story li').length;
	  window.seqchart.setMsg('');
	  return [own, n, shown ? 1 : 0];
	})()`))
	if story[0] == 0 || story[1] != story[0] || story[2] != 1 {
		t.Errorf("%s: message filter: %d events of the message, %d in its story, undimmed packets all its own: %v", path, story[0], story[1], story[2] == 1)
	}
}

// openLong opens the chart of standard lossy seed 2 under preset legacy
// (some 3,100 events; it fails with 8 violations) and logs its size and
// the time from navigation to the page being drawn.
func openLong(ctx context.Context, t *testing.T, dir string) {
	cfg := sim.Config{Seed: 2, Profile: "lossy", Preset: mustPreset(t, "legacy"), SkipCheck: true}
	plan, err := sim.Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r := sim.Run(cfg, plan)
	h := r.History()
	vs := model.CheckPromised(h, model.FixedPolicy())
	url := writeChart(t, dir, "long.html", seqchart.Run{Title: "standard lossy seed 2 legacy", Plan: plan.String(), History: h, Violations: vs})
	if err := chromedp.Do(ctx, chromedp.Navigate(url), chromedp.WaitReady(`body[data-ready="1"]`)); err != nil {
		t.Fatal(err)
	}
	ready := run(ctx, t, chromedp.Evaluate[float64](`performance.getEntriesByName('seqchart-ready')[0].startTime`))
	painted := run(ctx, t, chromedp.Evaluate[float64](`new Promise(ok => { const f = () => {
	  const m = performance.getEntriesByName('seqchart-painted'); m.length ? ok(m[0].startTime) : setTimeout(f, 10) }; f() })`, chromedp.EvalAwaitPromise))
	drawn := run(ctx, t, chromedp.Evaluate[int](drawnPackets))
	if want := sentPackets(h); drawn != want {
		t.Errorf("long run: %d packet arrows drawn, the history recorded %d packets", drawn, want)
	}
	t.Logf("long run: %d events, %d packets, %d violations: chart drawn %.0f ms and on screen %.0f ms after navigation",
		len(h.Events), drawn, len(vs), ready, painted)
}

func mustPreset(t *testing.T, name string) engine.Preset {
	t.Helper()
	p, err := engine.PresetByName(name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// run runs one browser action and returns its result.
func run[T any](ctx context.Context, t *testing.T, a chromedp.Action[T]) T {
	t.Helper()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
