package main

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mqttlab/mqttlab/sim"
)

// defaultSeeds is the default campaign size: about a minute on 2 idle cores
// with the default world (standard, fixed, swarm). Measured: about 8.5 ms of
// CPU per seed (user+sys of 1000- and 2000-seed campaigns; about 115 seeds/s
// per core, so about 200 seeds/s on 2 cores); on a machine busy with other
// work the same campaign ran at 60-120 seeds/s. Re-tune with
// BenchmarkCampaignSeed.
const defaultSeeds = 12000

// campaign is a validated campaign configuration.
type campaign struct {
	world         world
	start, count  uint64
	shard, shards uint64
	workers       int
	out           string
	resume        bool
	force         bool     // replace another campaign's results in out
	args          []string // the campaign's own arguments, for the -resume hint
	// shardBase is the -out every shard's default directory is under, when
	// -shard was given without -out ("" otherwise).
	shardBase string
	// shrink is how long each failing seed is shrunk for (0: not shrunk).
	shrink time.Duration
}

// cmdCampaign runs many seeds over workers.
func (e *env) cmdCampaign(args []string) int {
	fs := e.newFlagSet("campaign", "[flags]", "Runs seeds [start, start+seeds) of one world over workers, judging each run by the\n"+
		"invariants the preset promises. Failing seeds' plans go to DIR/seed-N.plan, and each\n"+
		"one shrunk within -shrink (see 'simrun shrink') to DIR/seed-N.min.plan; every\n"+
		"finished seed is appended to DIR/results.jsonl at once, so -resume continues an\n"+
		"interrupted campaign. -shard i/n runs the seeds s with (s-start)%n == i; 'simrun\n"+
		"merge' combines shard directories into the unsharded summary. The default DIR is\n"+
		"named after the world (out/campaign-PRESET-PROFILE-SCENARIO-vVERSION-JUDGE). Without\n"+
		"-resume, an earlier run of the same campaign in DIR is replaced; DIR holding another\n"+
		"campaign's results is refused unless -force.")
	count := fs.uint64Flag("seeds", defaultSeeds, 1, "number of seeds `N`")
	start := fs.uint64Flag("start", 0, 0, "first seed `S`")
	workers := fs.intFlag("workers", runtime.NumCPU(), 1, "`W` worker goroutines")
	out := fs.String("out", "", "output `DIR` (default out/campaign-PRESET-PROFILE-SCENARIO-vVERSION-JUDGE, with -shard i/n under it: shard-i-of-n)")
	resume := fs.Bool("resume", false, "continue the campaign in DIR: skip the seeds its results.jsonl already has")
	force := fs.Bool("force", false, "replace another campaign's results in DIR")
	shard := fs.String("shard", "0/1", "run only shard `i/n` of the seeds")
	shrink := fs.Duration("shrink", defaultCampaignShrink, "shrink each failing seed for at most `D` and save DIR/seed-N.min.plan beside seed-N.plan (0: do not shrink). "+
		"Cost: up to D of a worker's time per failing seed, so a campaign that fails many seeds (a legacy preset) takes up to failing×D/workers longer, "+
		"and each worker holds its shrink's runs in memory meanwhile; -shrink 0 surveys first, 'simrun shrink' the seeds you pick")
	var wf worldFlags
	wf.add(fs)
	pos, err := fs.parse(args)
	if err != nil {
		return e.fail("campaign", err)
	}
	if len(pos) > 0 {
		return e.fail("campaign", badUsage("campaign", "unexpected argument %q (campaign takes only flags)", pos[0]))
	}
	if *shrink < 0 {
		return e.fail("campaign", badUsage("campaign", "bad -shrink %s: want 0 (off) or a positive duration", *shrink))
	}
	c := campaign{start: *start, count: *count, workers: *workers, out: *out, resume: *resume, force: *force, args: args, shrink: *shrink}
	if err := c.validate(wf, *shard, fs.isSet("out")); err != nil {
		return e.fail("campaign", err)
	}
	return e.runCampaign(c)
}

// validate checks the flags and fills in the world and shard.
func (c *campaign) validate(wf worldFlags, shard string, outSet bool) error {
	w, err := wf.resolve("campaign")
	if err != nil {
		return err
	}
	c.world = w
	if c.count == 0 {
		return badUsage("campaign", "bad -seeds 0: want at least 1")
	}
	if c.start > math.MaxUint64-c.count {
		return badUsage("campaign", "bad -start %d: -start + -seeds overflows uint64", c.start)
	}
	if c.workers < 1 {
		return badUsage("campaign", "bad -workers %d: want at least 1", c.workers)
	}
	c.shard, c.shards, err = parseShard(shard)
	if err != nil {
		return badUsage("campaign", "bad -shard %q: %v", shard, err)
	}
	if c.resume && c.force {
		return badUsage("campaign", "-resume and -force: -resume continues the campaign in DIR, -force replaces it; give one")
	}
	if !outSet {
		c.out = defaultOut(w)
		if c.shards > 1 {
			c.shardBase = c.out
			c.out = shardDir(c.shardBase, c.shard, c.shards)
		}
	}
	return nil
}

// defaultOut is the default output directory of a campaign of world w: one
// per world, so campaigns of different worlds never replace each other.
func defaultOut(w world) string {
	r := newRecord(w, 0)
	return filepath.Join("out", fmt.Sprintf("campaign-%s-%s-%s-v%s-%s", r.Preset, r.Profile, r.Scenario, r.Version, r.Judge))
}

// shardDir is the default directory of shard i of n under base.
func shardDir(base string, i, n uint64) string {
	return filepath.Join(base, fmt.Sprintf("shard-%d-of-%d", i, n))
}

// mergeCommand is the command that merges this campaign's shards.
func (c campaign) mergeCommand() string {
	if c.shardBase == "" || c.shards > 16 {
		return replayPrefix + " merge DIR... (each shard's -out)"
	}
	dirs := make([]string, c.shards)
	for i := range dirs {
		dirs[i] = absPath(shardDir(c.shardBase, uint64(i), c.shards))
	}
	return replayPrefix + " merge " + strings.Join(dirs, " ")
}

// parseShard reads "i/n" with 0 <= i < n.
func parseShard(s string) (i, n uint64, err error) {
	a, b, ok := strings.Cut(s, "/")
	if !ok {
		return 0, 0, fmt.Errorf("want i/n, e.g. 0/2")
	}
	if i, err = strconv.ParseUint(a, 10, 64); err != nil {
		return 0, 0, fmt.Errorf("shard index %q is not a number", a)
	}
	if n, err = strconv.ParseUint(b, 10, 64); err != nil || n == 0 {
		return 0, 0, fmt.Errorf("shard count %q is not a number >= 1", b)
	}
	if i >= n {
		return 0, 0, fmt.Errorf("shard index %d is not below the shard count %d", i, n)
	}
	return i, n, nil
}

// inCampaign reports whether seed belongs to this campaign's shard.
func (c campaign) inCampaign(seed uint64) bool {
	return seed >= c.start && seed-c.start < c.count && (seed-c.start)%c.shards == c.shard
}

// todo returns the seeds of this shard that done does not have, ascending.
func (c campaign) todo(done map[uint64]bool) []uint64 {
	var seeds []uint64
	for s := c.start + c.shard; s-c.start < c.count; s += c.shards {
		if !done[s] {
			seeds = append(seeds, s)
		}
		if s > math.MaxUint64-c.shards {
			break
		}
	}
	return seeds
}

// resumeCommand is the command that continues this campaign.
func (c campaign) resumeCommand() string {
	return resumeArgs(c.args, c.out)
}

// slicesWithout returns args without the given values.
func slicesWithout(args []string, drop ...string) []string {
	var out []string
	for _, a := range args {
		keep := true
		for _, d := range drop {
			keep = keep && a != d
		}
		if keep {
			out = append(out, a)
		}
	}
	return out
}

// prepare readies the output directory and returns the records already
// done (with -resume), the count of unreadable lines dropped and the count
// of records dropped because their shrink was interrupted (those seeds run
// again).
func (c campaign) prepare() ([]record, int, int, error) {
	if err := os.MkdirAll(c.out, 0o755); err != nil {
		return nil, 0, 0, ioFailure(err, "output dir")
	}
	if !c.resume {
		if err := c.checkOverwrite(); err != nil {
			return nil, 0, 0, err
		}
		if err := c.clean(); err != nil {
			return nil, 0, 0, err
		}
		return nil, 0, 0, writeManifest(c.out, manifestOf(c))
	}
	recs, bad, err := c.resumable()
	if err != nil {
		return nil, 0, 0, err
	}
	recs, redo := withoutCutShrinks(recs)
	if bad > 0 || redo > 0 {
		if err := rewriteResults(c.out, recs); err != nil {
			return nil, 0, 0, ioFailure(err, "dropping unreadable lines")
		}
	}
	return recs, bad, redo, writeManifest(c.out, manifestOf(c))
}

// withoutCutShrinks drops the records whose shrink a signal cut short:
// -resume runs those seeds again and shrinks them in full.
func withoutCutShrinks(recs []record) ([]record, int) {
	var kept []record
	for _, r := range recs {
		if !r.ShrinkCut {
			kept = append(kept, r)
		}
	}
	return kept, len(recs) - len(kept)
}

// checkOverwrite refuses to replace another campaign's results in c.out
// (its campaign.json, or for a directory from before campaign.json its
// records, say which) unless -force.
func (c campaign) checkOverwrite() error {
	if c.force {
		return nil
	}
	recs, _, err := readResults(c.out)
	if err != nil || len(recs) == 0 {
		return nil // nothing readable to lose
	}
	want := manifestOf(c)
	m, ok, err := readManifest(c.out)
	other := ""
	switch {
	case err != nil:
		other = "results of an unknown campaign"
	case ok && (!m.sameCampaign(want) || m.Shard != want.Shard):
		other = fmt.Sprintf("%d result(s) of the campaign %s", len(recs), m)
	case !ok && recs[0].worldKey() != want.worldKey():
		other = fmt.Sprintf("%d result(s) of world %s", len(recs), recs[0].worldKey())
	default:
		return nil
	}
	return badUsage("campaign", "%s holds %s, not %s: -resume continues that campaign, -force replaces it, or choose another -out", c.out, other, want)
}

// resumable reads the results -resume continues, refusing a directory of
// another campaign (its campaign.json or its records say so). -seeds may
// change, as long as every seed done is still in the campaign.
func (c campaign) resumable() ([]record, int, error) {
	results := filepath.Join(c.out, resultsFile)
	m, ok, err := readManifest(c.out)
	if err != nil {
		return nil, 0, err
	}
	want := manifestOf(c)
	if ok && (m.worldKey() != want.worldKey() || m.Start != want.Start || m.Shard != want.Shard || m.Shards != want.Shards) {
		return nil, 0, badUsage("campaign", "-resume: %s holds the campaign %s, not %s (resume with its flags, or choose another -out)", c.out, m, want)
	}
	recs, bad, err := readResults(c.out)
	if err != nil {
		return nil, 0, fmt.Errorf("reading %s: %w", results, err)
	}
	for _, r := range recs {
		if r.worldKey() != want.worldKey() {
			return nil, 0, badUsage("campaign", "-resume: %s holds seed %d of world %s, not %s (same flags, or another -out)", results, r.Seed, r.worldKey(), want.worldKey())
		}
		if !c.inCampaign(r.Seed) {
			return nil, 0, badUsage("campaign", "-resume: %s holds seed %d, outside this campaign's -start, -seeds and -shard", results, r.Seed)
		}
	}
	return dedupe(recs), bad, nil
}

// dedupe keeps the first record of each key.
func dedupe(recs []record) []record {
	seen := map[string]bool{}
	var out []record
	for _, r := range recs {
		if !seen[r.key()] {
			seen[r.key()] = true
			out = append(out, r)
		}
	}
	return out
}

// clean removes an earlier campaign's files from the output dir.
func (c campaign) clean() error {
	plans, err := filepath.Glob(filepath.Join(c.out, "seed-*.plan"))
	if err != nil {
		return err
	}
	for _, p := range append(plans, filepath.Join(c.out, resultsFile), filepath.Join(c.out, "failing.txt"), filepath.Join(c.out, "summary.txt"), filepath.Join(c.out, manifestFile)) {
		if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
			return ioFailure(err, "removing an earlier campaign's %s", p)
		}
	}
	return nil
}

// runCampaign runs the campaign and prints its summary.
func (e *env) runCampaign(c campaign) int {
	done, bad, redo, err := c.prepare()
	if err != nil {
		return e.fail("campaign", err)
	}
	if bad > 0 {
		fmt.Fprintf(e.stderr, "simrun campaign: dropped %d unreadable line(s) of %s (a run cut short); those seeds run again\n", bad, resultsFile)
	}
	if redo > 0 {
		fmt.Fprintf(e.stderr, "simrun campaign: %d seed(s) whose shrink was interrupted run and shrink again\n", redo)
	}
	have := map[uint64]bool{}
	for _, r := range done {
		have[r.Seed] = true
	}
	seeds := c.todo(have)
	fmt.Fprintf(e.stdout, "campaign: seeds %d..%d shard %d/%d, %s, %d workers, out %s; %d to run, %d already done\n",
		c.start, c.start+c.count-1, c.shard, c.shards, c.world.describe(), c.workers, absPath(c.out), len(seeds), len(done))
	began := time.Now()
	e.catchSignals()
	fresh, interrupted, err := e.execCampaign(c, seeds, len(done))
	elapsed := time.Since(began)
	if err != nil {
		return e.fail("campaign", err)
	}
	if len(fresh) > 0 {
		fmt.Fprintf(e.stdout, "ran %d seeds in %.1fs: %.1f seeds/s on %d workers\n", len(fresh), elapsed.Seconds(), float64(len(fresh))/elapsed.Seconds(), c.workers)
	}
	s := summarizeCampaign(append(done, fresh...))
	if interrupted {
		s.incomplete = fmt.Sprintf("interrupted, %d of %d seeds done", len(s.recs), len(seeds)+len(done))
		if cut := countCut(s.recs); cut > 0 {
			s.incomplete += fmt.Sprintf(", %d shrink(s) cut short", cut)
		}
	} else if c.shards > 1 {
		s.incomplete = fmt.Sprintf("this is shard %d/%d of it (merge every shard's directory for the whole)", c.shard, c.shards)
	}
	if err := e.writeCampaignFiles(c.out, s); err != nil {
		return e.fail("campaign", ioFailure(err, "writing the summary"))
	}
	s.writeText(e.stdout)
	s.writeReplays(e.stdout, filepath.Join(c.out, "failing.txt"))
	if interrupted {
		fmt.Fprintf(e.stdout, "interrupted: %d of %d seeds done; continue with:\n  %s\n", len(s.recs), len(seeds)+len(done), c.resumeCommand())
		return exitInterrupted
	}
	if c.shards > 1 {
		fmt.Fprintf(e.stdout, "shard %d/%d done; once every shard is, combine them with:\n  %s\n", c.shard, c.shards, c.mergeCommand())
	}
	return s.exitStatus()
}

// writeCampaignFiles writes summary.txt and failing.txt into dir.
func (e *env) writeCampaignFiles(dir string, s campaignSummary) error {
	var sum, fail bytes.Buffer
	s.writeText(&sum)
	s.writeFailingList(&fail)
	if err := os.WriteFile(filepath.Join(dir, "summary.txt"), sum.Bytes(), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "failing.txt"), fail.Bytes(), 0o644)
}

// seedResult is what a worker hands back for one seed.
type seedResult struct {
	rec  record
	plan string // the plan text, for failing seeds
	min  string // the shrunk plan's file text, for failing seeds shrunk
}

// execCampaign runs seeds over the workers, recording each result as it
// comes, until all are done or the context is cancelled (a signal); then it
// stops dispatching, lets in-flight seeds finish, and returns what finished.
func (e *env) execCampaign(c campaign, seeds []uint64, already int) ([]record, bool, error) {
	w, err := openResults(c.out)
	if err != nil {
		return nil, false, ioFailure(err, "opening %s", resultsFile)
	}
	defer w.close()
	jobs := make(chan uint64)
	results := make(chan seedResult)
	var wg sync.WaitGroup
	for range c.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// A worker's seeds reuse one world's memory; runSeed is done
			// with each history before the next seed.
			rn := sim.Runner{ReuseHistories: true}
			for seed := range jobs {
				res := runSeed(&rn, c.world, seed)
				e.shrinkSeed(c, &res)
				results <- res
			}
		}()
	}
	interrupted := false
	go func() {
		defer close(jobs)
		for _, s := range seeds {
			select {
			case <-e.ctx.Done():
				return
			case jobs <- s:
			}
		}
	}()
	go func() { wg.Wait(); close(results) }()
	bar := e.newBar(int64(len(seeds)), "seeds", "campaign")
	var out []record
	var werr error
	failing := 0
	for res := range results {
		res.rec.dir = c.out
		if werr == nil {
			werr = e.record(c, w, res)
		}
		out = append(out, res.rec)
		if res.rec.failed() {
			failing++
		}
		bar.describe("%d failing", failing)
		bar.set(int64(len(out)))
		if e.afterResult != nil {
			e.afterResult(already + len(out))
		}
	}
	bar.finish()
	if e.ctx.Err() != nil {
		interrupted = len(out) < len(seeds) || slices.ContainsFunc(out, func(r record) bool { return r.ShrinkCut })
	}
	return out, interrupted, werr
}

// record saves a failing seed's plan, then appends the result line.
func (e *env) record(c campaign, w *resultsWriter, res seedResult) error {
	if res.rec.failed() {
		path := filepath.Join(c.out, planName(res.rec.Seed))
		if err := os.WriteFile(path, []byte(res.plan), 0o644); err != nil {
			return ioFailure(err, "saving plan")
		}
	}
	if res.min != "" {
		if err := os.WriteFile(filepath.Join(c.out, minPlanName(res.rec.Seed)), []byte(res.min), 0o644); err != nil {
			return ioFailure(err, "saving the shrunk plan")
		}
	}
	return w.write(res.rec)
}

// runSeed runs one seed of world w on rn and returns its record (read from
// the run before rn runs again); a sim error or a panic is recorded as the
// seed's finding.
func runSeed(rn *sim.Runner, w world, seed uint64) (res seedResult) {
	cfg := w.config(seed)
	res.rec = newRecord(w, seed)
	plan, err := sim.Generate(cfg)
	if err != nil {
		res.rec.Error = err.Error()
		res.rec.Checksum = "-"
		return res
	}
	defer func() {
		if p := recover(); p != nil {
			res.rec.Error = fmt.Sprintf("panic: %v", p)
			res.rec.Checksum = "-"
		}
		if res.rec.failed() { // only a failing seed's plan is saved
			res.plan = plan.String()
		}
	}()
	r := rn.Run(cfg, plan)
	res.rec.Checksum = checksumHex(r.Checksum())
	res.rec.Stats = statsOf(r.Stats)
	if r.Err != nil {
		res.rec.Error = r.Err.Error()
		return res
	}
	if vs := w.judge.judgeRun(r, false).violations; len(vs) > 0 {
		res.rec.Violations = map[string]int{}
		for _, v := range vs {
			res.rec.Violations[v.Invariant.String()]++
		}
		first := violationsJSON(vs[:1])[0]
		res.rec.First = &first
	}
	return res
}

// newRecord returns the record of seed in world w, with no result yet.
func newRecord(w world, seed uint64) record {
	return record{Seed: seed, Preset: w.preset.Name, Profile: w.profile, Scenario: w.scenario, Version: w.versionLabel(), Judge: string(w.judge)}
}

// resumeArgs is the command that continues the campaign run with args in
// dir: its arguments without -resume and -out, then -out with dir's
// absolute path (the command runs from any directory) and -resume. Every
// argument is shell-quoted as it needs.
func resumeArgs(args []string, dir string) string {
	var kept []string
	for i := 0; i < len(args); i++ {
		a := strings.TrimPrefix(args[i], "-")
		name, _, hasValue := strings.Cut(strings.TrimPrefix(a, "-"), "=")
		switch {
		case name == "resume":
			continue
		case name == "out":
			if !hasValue {
				i++ // its value is the next argument
			}
			continue
		}
		kept = append(kept, shellQuote(args[i]))
	}
	kept = append(kept, "-out", absPath(dir), "-resume")
	return replayPrefix + " campaign " + strings.Join(kept, " ")
}
