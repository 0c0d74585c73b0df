package main

import (
	"fmt"
	"os"
	"path/filepath"
)

// cmdMerge combines campaign directories into one summary.
func (e *env) cmdMerge(args []string) int {
	fs := e.newFlagSet("merge", "DIR...", "Combines the results.jsonl of campaign directories (the shards of one campaign, or\n"+
		"several campaigns) into one summary: for the shards of a campaign it is the\n"+
		"unsharded campaign's summary. A seed found in two directories must have the same\n"+
		"checksum (the sim is deterministic); it counts once. Exits 1 if a seed failed.")
	pos, err := fs.parse(args)
	if err != nil {
		return e.fail("merge", err)
	}
	if len(pos) == 0 {
		return e.fail("merge", badUsage("merge", "want at least one campaign DIR"))
	}
	recs, err := mergeDirs(pos)
	if err != nil {
		return e.fail("merge", err)
	}
	s := summarizeCampaign(recs)
	s.writeText(e.stdout)
	s.writeReplays(e.stdout, "")
	return s.exitStatus()
}

// mergeDirs reads every directory's results and combines them by key,
// checking that a seed seen twice has the same checksum.
func mergeDirs(dirs []string) ([]record, error) {
	byKey := map[string]record{}
	var out []record
	for _, dir := range dirs {
		if _, err := os.Stat(filepath.Join(dir, resultsFile)); err != nil {
			return nil, fmt.Errorf("%s is not a campaign directory: %w", dir, err)
		}
		recs, bad, err := readResults(dir)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", dir, err)
		}
		if bad > 0 {
			return nil, fmt.Errorf("%s has %d unreadable line(s) in %s: finish that campaign with -resume first", dir, bad, resultsFile)
		}
		for _, r := range recs {
			prev, seen := byKey[r.key()]
			if !seen {
				byKey[r.key()] = r
				out = append(out, r)
				continue
			}
			if prev.Checksum != r.Checksum {
				return nil, fmt.Errorf("seed %d of world %s has checksum %s in %s but %s in %s: the runs are not deterministic",
					r.Seed, r.worldKey(), prev.Checksum, prev.dir, r.Checksum, r.dir)
			}
		}
	}
	return out, nil
}
