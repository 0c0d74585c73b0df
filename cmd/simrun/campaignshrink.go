package main

import (
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/mqttlab/mqttlab/sim"
)

// defaultCampaignShrink is a campaign's default shrink budget per failing
// seed.
const defaultCampaignShrink = 30 * time.Second

// minPlanName is the file name of a failing seed's shrunk plan.
func minPlanName(seed uint64) string { return "seed-" + strconv.FormatUint(seed, 10) + ".min.plan" }

// shrinkSeed shrinks a failing seed's plan within c.shrink (a worker calls
// it after runSeed) and puts the shrunk plan file's text in res.min and the
// sizes in its record. A seed whose run did not complete (an error, a
// panic) is not shrunk; a shrink that fails leaves the seed as it was.
func (e *env) shrinkSeed(c campaign, res *seedResult) {
	if c.shrink <= 0 || len(res.rec.Violations) == 0 || res.rec.Error != "" {
		return
	}
	cfg := c.world.config(res.rec.Seed)
	plan, err := sim.Generate(cfg)
	if err != nil {
		return
	}
	job := shrinkJob{cfg: cfg, plan: plan, judge: c.world.judge, timeout: c.shrink, ctx: e.ctx}
	if e.afterShrinkRun != nil {
		job.progress = func(p sim.ShrinkProgress) { e.afterShrinkRun(p.Runs) }
	}
	s, err := runShrink(job)
	if err != nil {
		return
	}
	res.min = s.fileText()
	res.rec.Ops, res.rec.MinOps, res.rec.ShrinkCut = s.FromOps, len(s.Plan.Ops), s.interrupted
}

// shrunkText is what a failing record's line adds about its shrunk plan.
func (r record) shrunkText() string {
	if r.MinOps == 0 {
		return ""
	}
	cut := ""
	if r.ShrinkCut {
		cut = " (interrupted: -resume redoes it)"
	}
	return fmt.Sprintf(" [shrunk %d -> %d ops%s: %s]", r.Ops, r.MinOps, cut, minPlanName(r.Seed))
}

// minReplayCommand is the command that replays a failing record's shrunk
// plan, or "" when it has none.
func (r record) minReplayCommand() string {
	if r.MinOps == 0 {
		return ""
	}
	return replayPrefix + " replay " + absPath(filepath.Join(r.dir, minPlanName(r.Seed))) + judge(r.Judge).flagArg()
}

// countCut counts the records whose shrink a signal cut short.
func countCut(recs []record) int {
	n := 0
	for _, r := range recs {
		if r.ShrinkCut {
			n++
		}
	}
	return n
}

// writeShrunk prints the line on the failing seeds' shrunk plans: how many
// were shrunk, the median and 90th percentile of their ops before and
// after, and the smallest.
func (s campaignSummary) writeShrunk(w io.Writer) {
	var before, after []int
	var smallest record
	for _, r := range s.failing {
		if r.MinOps == 0 {
			continue
		}
		before, after = append(before, r.Ops), append(after, r.MinOps)
		if smallest.MinOps == 0 || r.MinOps < smallest.MinOps {
			smallest = r
		}
	}
	if len(after) == 0 {
		return
	}
	slices.Sort(before)
	slices.Sort(after)
	fmt.Fprintf(w, "shrunk: %d of %d failing seeds, to %d ops median (90th percentile %d) from %d (%d); smallest: seed %d %s, %d ops",
		len(after), len(s.failing), percentile(after, 50), percentile(after, 90), percentile(before, 50), percentile(before, 90),
		smallest.Seed, smallest.Preset, smallest.MinOps)
	if cut := countCut(s.failing); cut > 0 {
		fmt.Fprintf(w, "; %d interrupted (the smallest plan so far; -resume redoes them)", cut)
	}
	fmt.Fprintln(w)
}
