package sim

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden checksums in testdata")

// runSeed generates and runs the standard scenario under swarm for one seed.
func runSeed(seed uint64) Result {
	cfg := Config{Seed: seed, Profile: "swarm"}
	plan, err := Generate(cfg)
	if err != nil {
		return Result{Err: err}
	}
	return Run(cfg, plan)
}

// checksums runs seeds [0, n) on workers goroutines (the test's own
// parallelism; the world itself has none).
func checksums(n, workers int) ([]uint64, error) {
	out := make([]uint64, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	next := make(chan uint64)
	for i := 0; i < workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for seed := range next {
				r := runSeed(seed)
				out[seed], errs[seed] = r.Checksum(), r.Err
			}
		}()
	}
	for s := uint64(0); s < uint64(n); s++ {
		next <- s
	}
	close(next)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("seed %d: %w", i, err)
		}
	}
	return out, nil
}

// TestDeterminism runs 1,000 seeds of the standard scenario under swarm
// twice, with different GOMAXPROCS and worker counts, and compares checksums.
func TestDeterminism(t *testing.T) {
	const seeds = 1000
	prev := runtime.GOMAXPROCS(1)
	a, err := checksums(seeds, 1)
	runtime.GOMAXPROCS(prev)
	if err != nil {
		t.Fatal(err)
	}
	workers := max(2, prev)
	runtime.GOMAXPROCS(workers)
	b, err := checksums(seeds, workers)
	runtime.GOMAXPROCS(prev)
	if err != nil {
		t.Fatal(err)
	}
	distinct := map[uint64]bool{}
	for i := range a {
		if a[i] != b[i] {
			t.Errorf("seed %d: checksum %016x with GOMAXPROCS=1, %016x with %d", i, a[i], b[i], workers)
		}
		distinct[a[i]] = true
	}
	if len(distinct) < seeds*9/10 {
		t.Errorf("only %d distinct checksums over %d seeds: the seed barely matters", len(distinct), seeds)
	}
}

const goldenFile = "testdata/golden-checksums.txt"

// goldenCases are the runs whose checksums are committed.
func goldenCases() []Config {
	var cs []Config
	for _, prof := range []string{"calm", "lossy", "crashy", "swarm"} {
		for _, seed := range []uint64{1, 2, 42} {
			cs = append(cs, Config{Seed: seed, Profile: prof})
		}
	}
	cs = append(cs, Config{Seed: 7, Profile: "calm", Scenario: "small", Version: 4})
	return cs
}

// runGoldenCases runs every golden case and hands each result to f with its
// key, in goldenCases order.
func runGoldenCases(t *testing.T, f func(key string, r Result)) {
	t.Helper()
	for _, c := range goldenCases() {
		c, err := c.withDefaults()
		if err != nil {
			t.Fatal(err)
		}
		f(goldenKey(c), mustRun(t, c))
	}
}

// mustRun generates the plan of c and runs it, failing tb on any error.
func mustRun(tb testing.TB, c Config) Result {
	tb.Helper()
	plan, err := Generate(c)
	if err != nil {
		tb.Fatal(err)
	}
	r := Run(c, plan)
	if r.Err != nil {
		tb.Fatalf("seed %d: %v", c.Seed, r.Err)
	}
	return r
}

func goldenKey(c Config) string {
	return fmt.Sprintf("%s/%s/seed=%d/v%d", c.Scenario, c.Profile, c.Seed, c.Version)
}

// TestGoldenChecksums compares fixed seeds with checksums committed in
// testdata, so a trace that differs across machines or Go versions fails.
// Regenerate with: go test ./sim -run TestGoldenChecksums -update
func TestGoldenChecksums(t *testing.T) {
	got := map[string]uint64{}
	var keys []string
	runGoldenCases(t, func(k string, r Result) {
		keys = append(keys, k)
		got[k] = r.Checksum()
	})
	if *update {
		var b strings.Builder
		b.WriteString("# scenario/profile/seed/version checksum (go test ./sim -run TestGoldenChecksums -update)\n")
		for _, k := range keys {
			fmt.Fprintf(&b, "%s %016x\n", k, got[k])
		}
		if err := os.WriteFile(goldenFile, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	f, err := os.Open(goldenFile)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	defer f.Close()
	want := map[string]uint64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || line == "" {
			continue
		}
		k, v, _ := strings.Cut(line, " ")
		sum, err := strconv.ParseUint(v, 16, 64)
		if err != nil {
			t.Fatalf("%s: bad line %q", goldenFile, line)
		}
		want[k] = sum
	}
	for _, k := range keys {
		if w, ok := want[k]; !ok {
			t.Errorf("%s: no golden checksum (run with -update)", k)
		} else if w != got[k] {
			t.Errorf("%s: checksum %016x, golden %016x", k, got[k], w)
		}
	}
}

// TestReplayFromFile saves a run's plan to a file, reads it back with
// nothing else, and replays it to the same checksum.
func TestReplayFromFile(t *testing.T) {
	for _, cfg := range []Config{{Seed: 11, Profile: "swarm"}, {Seed: 3, Profile: "crashy", Scenario: "small", Crash: CrashMode{Node: "s1", K: 5}}} {
		plan, err := Generate(cfg)
		if err != nil {
			t.Fatal(err)
		}
		want := Run(cfg, plan)
		path := filepath.Join(t.TempDir(), "run.plan")
		if err := os.WriteFile(path, []byte(plan.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		back, err := ParsePlan(string(data))
		if err != nil {
			t.Fatal(err)
		}
		rcfg, err := ConfigOf(back.Header)
		if err != nil {
			t.Fatal(err)
		}
		got := Run(rcfg, back)
		if got.Err != nil || want.Err != nil {
			t.Fatalf("errors: %v, %v", want.Err, got.Err)
		}
		if got.Checksum() != want.Checksum() {
			t.Errorf("replay of seed %d: checksum %016x, original %016x", cfg.Seed, got.Checksum(), want.Checksum())
		}
	}
}

// TestTraceHeaderFirst checks a trace starts with seed, profile and preset.
func TestTraceHeaderFirst(t *testing.T) {
	cfg := Config{Seed: 9, Profile: "lossy", Scenario: "small"}
	plan, _ := Generate(cfg)
	r := Run(cfg, plan)
	text := r.Trace()
	first, _, _ := strings.Cut(text, "\n")
	if first != "# seed 9 profile lossy preset fixed scenario small version 5" {
		t.Errorf("trace starts %q", first)
	}
	var h uint64 = fnvOffset64
	for _, b := range []byte(text) {
		h ^= uint64(b)
		h *= fnvPrime64
	}
	if got := r.Checksum(); h != got {
		t.Errorf("checksum %016x is not the FNV-64a of the trace text (%016x)", got, h)
	}
}
