package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// manifestFile is the name of a campaign's description in its -out dir.
const manifestFile = "campaign.json"

// manifest says which campaign a directory's results belong to: its world,
// its seed range and its shard. A campaign writes it before its first
// result; merge checks that the directories it is given are the shards of
// one campaign and cover its seeds exactly once.
type manifest struct {
	Preset   string `json:"preset"`
	Profile  string `json:"profile"`
	Scenario string `json:"scenario"`
	Version  string `json:"version"`
	Judge    string `json:"judge"`
	Start    uint64 `json:"start"`
	Seeds    uint64 `json:"seeds"`
	Shard    uint64 `json:"shard"`
	Shards   uint64 `json:"shards"`
	// Args are the campaign's own arguments (for the -resume command).
	Args []string `json:"args"`
}

// manifestOf is the manifest of campaign c.
func manifestOf(c campaign) manifest {
	r := newRecord(c.world, 0)
	return manifest{Preset: r.Preset, Profile: r.Profile, Scenario: r.Scenario, Version: r.Version, Judge: r.Judge,
		Start: c.start, Seeds: c.count, Shard: c.shard, Shards: c.shards, Args: append([]string{}, c.args...)}
}

// worldKey identifies the world, as record.worldKey does.
func (m manifest) worldKey() string {
	return m.Preset + "/" + m.Profile + "/" + m.Scenario + "/" + m.Version + "/" + m.Judge
}

// last is the campaign's last seed.
func (m manifest) last() uint64 { return m.Start + m.Seeds - 1 }

// campaignText describes the campaign the shards share (no shard).
func (m manifest) campaignText() string {
	return fmt.Sprintf("preset %s, profile %s, scenario %s, version %s, judge %s, seeds %d..%d", m.Preset, m.Profile, m.Scenario, m.Version, m.Judge, m.Start, m.last())
}

// String describes the campaign and the shard.
func (m manifest) String() string {
	s := m.campaignText()
	if m.Shards > 1 {
		s += fmt.Sprintf(", shard %d/%d", m.Shard, m.Shards)
	}
	return s
}

// sameCampaign reports whether m and o are shards of one campaign.
func (m manifest) sameCampaign(o manifest) bool {
	return m.worldKey() == o.worldKey() && m.Start == o.Start && m.Seeds == o.Seeds && m.Shards == o.Shards
}

// inShard reports whether seed belongs to m's shard.
func (m manifest) inShard(seed uint64) bool {
	return seed >= m.Start && seed-m.Start < m.Seeds && (seed-m.Start)%m.Shards == m.Shard
}

// readManifest reads dir's campaign.json; ok is false when there is none
// (a directory of a simrun from before manifests).
func readManifest(dir string) (m manifest, ok bool, err error) {
	data, err := os.ReadFile(filepath.Join(dir, manifestFile))
	if errors.Is(err, os.ErrNotExist) {
		return manifest{}, false, nil
	}
	if err != nil {
		return manifest{}, false, err
	}
	if err := json.Unmarshal(data, &m); err != nil || m.Shards == 0 || m.Seeds == 0 || m.Shard >= m.Shards {
		return manifest{}, false, fmt.Errorf("%s is not a campaign description (%v)", filepath.Join(dir, manifestFile), err)
	}
	return m, true, nil
}

// writeManifest writes m as dir's campaign.json (beside, then renamed).
func writeManifest(dir string, m manifest) error {
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	path := filepath.Join(dir, manifestFile)
	if err := os.WriteFile(path+".tmp", append(data, '\n'), 0o644); err != nil {
		return ioFailure(err, "writing %s", path)
	}
	return ioFailure(os.Rename(path+".tmp", path), "writing %s", path)
}
