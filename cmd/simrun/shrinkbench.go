package main

import (
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mqttlab/mqttlab/engine"
	"github.com/mqttlab/mqttlab/sim"
)

// benchPresets are the presets shrink -bench measures by default: every
// legacy knob at once, then each single knob.
var benchPresets = []string{"legacy", "legacy-retransmit", "legacy-pubrel", "legacy-ack-order", "volatile-qos2", "broker-nopersist", "broker-periodic"}

// benchFlags are shrink -bench's flags.
type benchFlags struct {
	on      bool
	seeds   uint64
	presets string
	sample  int
	maxOps  int
	csv     string
}

func (b *benchFlags) add(fs *flagSet) {
	fs.BoolVar(&b.on, "bench", false, "measure the shrinker: shrink the failing seeds of each -bench-presets campaign of -bench-seeds seeds, one at a time, and print the distribution")
	fs.Uint64Var(&b.seeds, "bench-seeds", 2000, "with -bench: seeds 0..`N`-1 of each preset's campaign")
	fs.StringVar(&b.presets, "bench-presets", strings.Join(benchPresets, ","), "with -bench: comma-separated presets, each maybe with mutation canaries: fixed+ignore-granted-qos")
	fs.IntVar(&b.sample, "bench-sample", 0, "with -bench: shrink at most `K` failing seeds per preset, evenly spread over them (0: every one)")
	fs.IntVar(&b.maxOps, "bench-max-ops", 20, "with -bench: the size a shrunk plan counts as small at")
	fs.StringVar(&b.csv, "bench-csv", "", "with -bench: also write one row per shrunk seed to `FILE`")
}

// benchRow is one shrunk seed of the benchmark.
type benchRow struct {
	preset      string
	seed        uint64
	target      string
	before      int
	after       int
	runs        int
	took        time.Duration // CPU time
	stopped     bool          // a bound ended it before the fixed point
	interrupted bool
}

// shrinkBench runs the benchmark: for each preset, the seeds' campaign on
// one goroutine, then a shrink of each (sampled) failing seed.
func (e *env) shrinkBench(bf benchFlags, w world, budget int, timeout time.Duration) int {
	presets, err := parsePresets(bf.presets)
	if err != nil {
		return e.fail("shrink", err)
	}
	if bf.seeds == 0 || bf.sample < 0 || bf.maxOps < 1 {
		return e.fail("shrink", badUsage("shrink", "-bench-seeds and -bench-max-ops want at least 1, -bench-sample at least 0"))
	}
	e.catchSignals()
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	fmt.Fprintf(e.stdout, "shrink bench: seeds 0..%d of profile %s, scenario %s, version %s, judge %s per preset; timeout %s of CPU time per seed, budget %d runs; GOMAXPROCS 1\n",
		bf.seeds-1, w.profile, w.scenario, w.versionLabel(), w.judge, timeout, budget)
	var all []benchRow
	var failing []int
	for _, p := range presets {
		if e.ctx.Err() != nil {
			break
		}
		wp := w
		wp.preset = p
		seeds, done := e.failingSeeds(wp, bf.seeds)
		if done < bf.seeds {
			fmt.Fprintf(e.stdout, "interrupted in the campaign of %s after %d of %d seeds (%d failing): not shrunk, not in the table\n",
				p.Name, done, bf.seeds, len(seeds))
			break
		}
		failing = append(failing, len(seeds))
		seeds = spread(seeds, bf.sample)
		fmt.Fprintf(e.stderr, "shrink bench: %s: %d failing seeds, shrinking %d\n", p.Name, failing[len(failing)-1], len(seeds))
		for _, seed := range seeds {
			if e.ctx.Err() != nil {
				break
			}
			row, err := e.benchSeed(wp, seed, budget, timeout)
			if err != nil {
				return e.fail("shrink", fmt.Errorf("preset %s seed %d: %w", p.Name, seed, err))
			}
			all = append(all, row)
		}
	}
	writeBenchTable(e.stdout, presets, failing, all, bf.maxOps, timeout)
	if bf.csv != "" {
		if err := writeBenchCSV(bf.csv, all); err != nil {
			return e.fail("shrink", fmt.Errorf("writing %s: %w", bf.csv, err))
		}
	}
	if e.ctx.Err() != nil {
		fmt.Fprintln(e.stdout, "interrupted: the table covers the seeds shrunk so far")
		return exitInterrupted
	}
	return exitOK
}

// parsePresets reads a comma-separated list of preset names, each maybe
// with mutation canaries after a "+": "fixed+ignore-granted-qos" is fixed
// with that engine.Mutation (the client's when the client implements it,
// else the broker's), so the mutation canaries' failing seeds can be
// shrunk too.
func parsePresets(list string) ([]engine.Preset, error) {
	var out []engine.Preset
	for _, name := range strings.Split(list, ",") {
		base, muts, _ := strings.Cut(strings.TrimSpace(name), "+")
		p, err := engine.PresetByName(base)
		if err != nil {
			return nil, badUsage("shrink", "bad -bench-presets: %v", err)
		}
		if muts != "" {
			m, err := engine.ParseMutation(muts)
			if err != nil {
				return nil, badUsage("shrink", "bad -bench-presets: %q: %v", name, err)
			}
			withMutation(&p, m)
			p.Name = base + "+" + muts
		}
		out = append(out, p)
	}
	return out, nil
}

// withMutation adds each mutation of m to the client's policy when the
// client implements it (its config then validates), else to the broker's.
func withMutation(p *engine.Preset, m engine.Mutation) {
	for bit := engine.Mutation(1); bit != 0 && bit <= m; bit <<= 1 {
		if m&bit == 0 {
			continue
		}
		c := engine.DefaultClientConfig("c", p.Client)
		c.Policy.Mutations |= bit
		if c.Validate() == nil {
			p.Client.Mutations |= bit
		} else {
			p.Broker.Mutations |= bit
		}
	}
}

// failingSeeds runs seeds 0..n-1 of world w and returns the failing ones
// and how many seeds it ran: fewer than n when a signal (e.ctx) stopped it
// between two seeds. It shows the campaign's progress (a bar, or a line on
// stderr every e.progressEvery) and calls e.afterResult after each seed.
func (e *env) failingSeeds(w world, n uint64) ([]uint64, uint64) {
	rn := sim.Runner{ReuseHistories: true}
	bar := e.newBar(int64(n), "seeds", "shrink bench: campaign "+w.preset.Name)
	defer bar.finish()
	var out []uint64
	for seed := range n {
		if e.ctx.Err() != nil {
			return out, seed
		}
		if res := runSeed(&rn, w, seed); len(res.rec.Violations) > 0 {
			out = append(out, seed)
		}
		bar.describe("%d failing", len(out))
		bar.set(int64(seed + 1))
		if e.afterResult != nil {
			e.afterResult(int(seed + 1))
		}
	}
	return out, n
}

// spread returns k of seeds evenly spread (all when k is 0 or enough).
func spread(seeds []uint64, k int) []uint64 {
	if k == 0 || k >= len(seeds) {
		return seeds
	}
	out := make([]uint64, k)
	for i := range out {
		out[i] = seeds[i*len(seeds)/k]
	}
	return out
}

// benchSeed shrinks one failing seed.
func (e *env) benchSeed(w world, seed uint64, budget int, timeout time.Duration) (benchRow, error) {
	cfg := w.config(seed)
	plan, err := sim.Generate(cfg)
	if err != nil {
		return benchRow{}, err
	}
	s, err := runShrink(shrinkJob{cfg: cfg, plan: plan, judge: w.judge, budget: budget, timeout: timeout, cpu: true, ctx: e.ctx})
	if err != nil {
		return benchRow{}, err
	}
	return benchRow{preset: w.preset.Name, seed: seed, target: s.Target.String(), before: s.FromOps, after: len(s.Plan.Ops),
		runs: s.Runs, took: s.cpu, stopped: s.Stopped, interrupted: s.interrupted}, nil
}

// writeBenchTable prints the distribution per preset and over all rows.
func writeBenchTable(w io.Writer, presets []engine.Preset, failing []int, rows []benchRow, maxOps int, timeout time.Duration) {
	fmt.Fprintf(w, "%-18s %7s %6s %9s %15s %15s %17s %13s\n", "preset", "failing", "shrunk", fmt.Sprintf("<=%d ops", maxOps),
		"ops before p50/p90", "ops after p50/p90", "cpu p50/p90", "runs p50/p90")
	total := 0
	for i, p := range presets[:min(len(presets), len(failing))] { // an interrupted bench ran fewer presets
		total += failing[i]
		writeBenchLine(w, p.Name, failing[i], filterRows(rows, p.Name), maxOps, timeout)
	}
	writeBenchLine(w, "all", total, rows, maxOps, timeout)
}

// filterRows returns the rows of one preset.
func filterRows(rows []benchRow, preset string) []benchRow {
	var out []benchRow
	for _, r := range rows {
		if r.preset == preset {
			out = append(out, r)
		}
	}
	return out
}

// writeBenchLine prints one line of the table: how many rows shrank to
// at most maxOps ops within the timeout, and the medians and 90th
// percentiles.
func writeBenchLine(w io.Writer, name string, failing int, rows []benchRow, maxOps int, timeout time.Duration) {
	small := 0
	var before, after, runs []int
	var took []time.Duration
	for _, r := range rows {
		if r.after <= maxOps && !r.stopped && (timeout == 0 || r.took <= timeout) {
			small++
		}
		before, after, runs, took = append(before, r.before), append(after, r.after), append(runs, r.runs), append(took, r.took)
	}
	pct := 0.0
	if len(rows) > 0 {
		pct = 100 * float64(small) / float64(len(rows))
	}
	fmt.Fprintf(w, "%-18s %7d %6d %8.1f%% %15s %15s %17s %13s\n", name, failing, len(rows), pct,
		pair(before), pair(after), durPair(took), pair(runs))
}

// percentile returns the nearest-rank p-th percentile of sorted xs.
func percentile[T int | time.Duration](xs []T, p int) T {
	if len(xs) == 0 {
		return 0
	}
	i := (p*len(xs) + 99) / 100
	return xs[max(i, 1)-1]
}

// pair prints the median and 90th percentile of xs.
func pair(xs []int) string {
	xs = slices.Clone(xs)
	slices.Sort(xs)
	return fmt.Sprintf("%d/%d", percentile(xs, 50), percentile(xs, 90))
}

// durPair prints the median and 90th percentile of ds.
func durPair(ds []time.Duration) string {
	ds = slices.Clone(ds)
	slices.Sort(ds)
	return fmt.Sprintf("%s/%s", percentile(ds, 50).Round(10*time.Millisecond), percentile(ds, 90).Round(10*time.Millisecond))
}

// writeBenchCSV writes one row per shrunk seed.
func writeBenchCSV(path string, rows []benchRow) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	cw := csv.NewWriter(f)
	_ = cw.Write([]string{"preset", "seed", "invariant", "ops_before", "ops_after", "runs", "cpu_seconds", "stopped"})
	for _, r := range rows {
		_ = cw.Write([]string{r.preset, strconv.FormatUint(r.seed, 10), r.target, strconv.Itoa(r.before), strconv.Itoa(r.after),
			strconv.Itoa(r.runs), strconv.FormatFloat(r.took.Seconds(), 'f', 3, 64), strconv.FormatBool(r.stopped || r.interrupted)})
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
