package main

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// cmdMerge combines the shard directories of one campaign into its summary.
func (e *env) cmdMerge(args []string) int {
	fs := e.newFlagSet("merge", "DIR...", "Combines the results.jsonl of the shard directories of one campaign into the\n"+
		"unsharded campaign's summary. The directories must be shards of one campaign (same\n"+
		"world, seed range and shard count, as each directory's campaign.json says) that\n"+
		"together hold every seed of the range exactly once; otherwise merge names the\n"+
		"missing or repeated seeds (and the command that finishes a shard), prints no\n"+
		"summary and exits 2. Exits 1 if a seed failed.")
	pos, err := fs.parse(args)
	if err != nil {
		return e.fail("merge", err)
	}
	if len(pos) == 0 {
		return e.fail("merge", badUsage("merge", "want at least one campaign DIR"))
	}
	shards, err := e.readShards(pos)
	if err != nil {
		return e.fail("merge", err)
	}
	camp, err := oneCampaign(shards)
	if err != nil {
		return e.fail("merge", err)
	}
	recs, problems, err := cover(camp, shards)
	if err != nil {
		return e.fail("merge", err)
	}
	if len(problems) > 0 {
		fmt.Fprintf(e.stderr, "simrun merge: the directories do not hold campaign %s exactly once, so no summary:\n", camp.campaignText())
		for _, p := range problems {
			fmt.Fprintf(e.stderr, "  %s\n", p)
		}
		return exitUsage
	}
	fmt.Fprintf(e.stdout, "merge: %d director%s holding campaign %s, every seed once\n", len(shards), plural(len(shards), "y", "ies"), camp.campaignText())
	s := summarizeCampaign(recs)
	s.writeText(e.stdout)
	s.writeReplays(e.stdout, "")
	return s.exitStatus()
}

// plural picks the singular or plural ending for n.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// shardInput is one directory given to merge.
type shardInput struct {
	dir    string
	m      manifest
	hasMan bool // false: a directory from before campaign.json
	recs   []record
}

// readShards reads every directory's manifest and results, refusing a
// directory given twice, one that is no campaign directory and one with a
// line cut short.
func (e *env) readShards(dirs []string) ([]shardInput, error) {
	var out []shardInput
	var infos []os.FileInfo
	for _, dir := range dirs {
		if _, err := os.Stat(filepath.Join(dir, resultsFile)); err != nil {
			return nil, fmt.Errorf("%s is not a campaign directory: %w", dir, err)
		}
		info, err := os.Stat(dir)
		if err != nil {
			return nil, err
		}
		for i, prev := range infos {
			if os.SameFile(prev, info) {
				return nil, fmt.Errorf("directory %s is given twice (as %s and %s): each shard counts once", dir, out[i].dir, dir)
			}
		}
		infos = append(infos, info)
		in, err := e.readShard(dir)
		if err != nil {
			return nil, err
		}
		out = append(out, in)
	}
	return out, nil
}

// readShard reads one directory.
func (e *env) readShard(dir string) (shardInput, error) {
	m, ok, err := readManifest(dir)
	if err != nil {
		return shardInput{}, err
	}
	recs, bad, err := readResults(dir)
	if err != nil {
		return shardInput{}, fmt.Errorf("reading %s: %w", dir, err)
	}
	if bad > 0 {
		return shardInput{}, fmt.Errorf("%s has %d unreadable line(s) in %s (a line cut short): finish that campaign with -resume first", dir, bad, resultsFile)
	}
	if !ok {
		if len(recs) == 0 {
			return shardInput{}, fmt.Errorf("%s has no results and no %s: nothing says which campaign it belongs to", dir, manifestFile)
		}
		fmt.Fprintf(e.stderr, "simrun merge: warning: %s has no %s (written by an older simrun): its campaign is taken from the seeds present, so seeds missing after the last one cannot be seen\n", dir, manifestFile)
	}
	return shardInput{dir: dir, m: m, hasMan: ok, recs: recs}, nil
}

// errNotOneCampaign is wrapped by the errors of directories that are not
// shards of one campaign.
var errNotOneCampaign = errors.New("not shards of one campaign")

// oneCampaign returns the campaign the shards belong to (Shard unset), or
// an error naming two directories of different campaigns or a record of
// another world. Directories without a manifest join the campaign of those
// with one; if none has one, the campaign is the seeds present, lowest to
// highest, unsharded.
func oneCampaign(shards []shardInput) (manifest, error) {
	var camp manifest
	from := ""
	for _, s := range shards {
		if !s.hasMan {
			continue
		}
		if from == "" {
			camp, from = s.m, s.dir
			continue
		}
		if !camp.sameCampaign(s.m) {
			return manifest{}, fmt.Errorf("%w: %s holds %s; %s holds %s", errNotOneCampaign, from, camp, s.dir, s.m)
		}
	}
	if from == "" {
		camp = inferCampaign(shards)
		from = shards[0].dir
	}
	for _, s := range shards {
		for _, r := range s.recs {
			if r.worldKey() != camp.worldKey() {
				return manifest{}, fmt.Errorf("%w: %s holds seed %d of world %s, %s holds world %s", errNotOneCampaign, s.dir, r.Seed, r.worldKey(), from, camp.worldKey())
			}
		}
	}
	camp.Shard, camp.Args = 0, nil
	return camp, nil
}

// inferCampaign is the campaign of directories without manifests: the world
// of their first record and the seeds from the lowest to the highest.
func inferCampaign(shards []shardInput) manifest {
	var m manifest
	first := true
	for _, s := range shards {
		for _, r := range s.recs {
			if first {
				m = manifest{Preset: r.Preset, Profile: r.Profile, Scenario: r.Scenario, Version: r.Version, Judge: r.Judge, Start: r.Seed, Seeds: 1, Shards: 1}
				first = false
			}
			lo, hi := min(m.Start, r.Seed), max(m.last(), r.Seed)
			m.Start, m.Seeds = lo, hi-lo+1
		}
	}
	return m
}

// cover checks that the shards hold every seed of campaign camp exactly
// once and returns the records; problems lists what is missing or
// repeated, one line each. A seed held twice with two checksums is an error
// (the runs are not deterministic).
func cover(camp manifest, shards []shardInput) (recs []record, problems []string, err error) {
	byShard := map[uint64][]string{}
	first := map[uint64]record{}
	var repeated, outside []uint64
	for _, s := range shards {
		if s.hasMan {
			byShard[s.m.Shard] = append(byShard[s.m.Shard], s.dir)
		}
		for _, r := range s.recs {
			prev, seen := first[r.Seed]
			switch {
			case seen && prev.Checksum != r.Checksum:
				return nil, nil, fmt.Errorf("seed %d of world %s has checksum %s in %s but %s in %s: the runs are not deterministic",
					r.Seed, r.worldKey(), prev.Checksum, prev.dir, r.Checksum, r.dir)
			case seen:
				repeated = append(repeated, r.Seed)
			case r.Seed < camp.Start || r.Seed > camp.last() || (s.hasMan && !s.m.inShard(r.Seed)):
				outside = append(outside, r.Seed)
				first[r.Seed] = r
			default:
				first[r.Seed] = r
				recs = append(recs, r)
			}
		}
	}
	problems = append(problems, shardProblems(camp, shards, byShard)...)
	if len(outside) > 0 {
		problems = append(problems, fmt.Sprintf("%d seed(s) outside their directory's shard or the campaign's range: %s", len(outside), seedRuns(outside)))
	}
	if len(repeated) > 0 {
		slices.Sort(repeated)
		problems = append(problems, fmt.Sprintf("%d seed(s) held more than once: %s", len(slices.Compact(repeated)), seedRuns(repeated)))
	}
	if missing := missingSeeds(camp, first, byShard); len(missing) > 0 {
		problems = append(problems, fmt.Sprintf("%d of %d seeds missing: %s", len(missing), camp.Seeds, seedRuns(missing)))
	}
	return recs, problems, nil
}

// shardProblems names the shards given twice, the shards not given, and
// the command that finishes each incomplete shard.
func shardProblems(camp manifest, shards []shardInput, byShard map[uint64][]string) []string {
	var out []string
	for _, i := range slices.Sorted(maps.Keys(byShard)) {
		if dirs := byShard[i]; len(dirs) > 1 {
			out = append(out, fmt.Sprintf("shard %d/%d is given %d times: %s", i, camp.Shards, len(dirs), strings.Join(dirs, ", ")))
		}
	}
	if len(byShard) > 0 {
		var absent []string
		for i := uint64(0); i < camp.Shards && len(absent) <= shownRuns; i++ {
			if byShard[i] == nil {
				absent = append(absent, fmt.Sprintf("%d/%d", i, camp.Shards))
			}
		}
		if len(absent) > 0 {
			out = append(out, "no directory of shard "+strings.Join(absent, ", "))
		}
	}
	for _, s := range shards {
		if s.hasMan && uint64(len(s.recs)) < shardSize(s.m) {
			out = append(out, fmt.Sprintf("%s holds %d of its shard's %d seeds; finish it with: %s", s.dir, len(s.recs), shardSize(s.m), resumeIn(s.m, s.dir)))
		}
	}
	return out
}

// shardSize is the number of seeds of m's shard.
func shardSize(m manifest) uint64 {
	if m.Shard >= m.Seeds {
		return 0
	}
	return (m.Seeds-m.Shard-1)/m.Shards + 1
}

// resumeIn is the command that continues the campaign of m in dir.
func resumeIn(m manifest, dir string) string {
	return resumeArgs(m.Args, dir)
}

// missingSeeds lists the campaign's seeds no directory holds (for the
// shards given; a shard not given is named, not listed seed by seed).
func missingSeeds(camp manifest, have map[uint64]record, byShard map[uint64][]string) []uint64 {
	var out []uint64
	for s := camp.Start; ; s++ {
		shard := (s - camp.Start) % camp.Shards
		if _, ok := have[s]; !ok && (len(byShard) == 0 || byShard[shard] != nil) {
			out = append(out, s)
		}
		if s == camp.last() {
			return out
		}
	}
}
