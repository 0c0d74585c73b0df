package sim

import (
	"errors"
	"fmt"
	"strings"

	"github.com/mqttlab/mqttlab/engine"
)

// ErrUnknownProfile is wrapped by lookups of a profile name that does not exist.
var ErrUnknownProfile = errors.New("sim: unknown fault profile")

// Profile is a set of fault probabilities and timings. Probabilities are
// integers per million (PPM); a zero probability never draws.
type Profile struct {
	Name string
	Doc  string

	// Network, per packet sent.
	LatencyMin, LatencyMax engine.Duration // one-way latency range (jitter)
	ChunkPPM               int             // the packet's bytes arrive in several pieces
	ResetPPM               int             // the connection is reset; each side learns at its own time
	HalfOpenPPM            int             // the connection goes silent; one side is never told

	// Plan level, per workload step of a generated plan.
	PartitionPPM int // a client is cut off from the broker for a while
	SlowPPM      int // a client's link gets slow for a while
	CrashPPM     int // a node crashes between steps, restarted later
	StateLossPPM int // a subscriber reboots having lost its incoming QoS2 state

	// Run time.
	CrashPointPPM   int // a node crashes at one crash point (random mode)
	LoseUnsyncedPPM int // an unsynced write is lost in a crash
	TornPPM         int // a crash tears the last unsynced write

	// Recovery timings.
	RestartMin, RestartMax engine.Duration // a crashed node restarts after this
	BackoffMin, BackoffMax engine.Duration // a client reconnects after this
	SlowExtra              engine.Duration // extra latency of a slow link
}

const ms = engine.Millisecond

// base is the timing every profile shares.
func base(name, doc string) Profile {
	return Profile{
		Name: name, Doc: doc,
		LatencyMin: 1 * ms, LatencyMax: 5 * ms,
		RestartMin: 100 * ms, RestartMax: 2000 * ms,
		BackoffMin: 100 * ms, BackoffMax: 1000 * ms,
		SlowExtra: 200 * ms,
	}
}

// Profiles lists the fault profiles.
func Profiles() []Profile {
	calm := base("calm", "no faults: fixed latency with jitter, whole packets")
	lossy := base("lossy", "network faults: chunking, resets, half-open connections, partitions, slow links")
	lossy.ChunkPPM = 200_000
	lossy.ResetPPM = 2_000
	lossy.HalfOpenPPM = 1_000
	lossy.PartitionPPM = 10_000
	lossy.SlowPPM = 10_000
	crashy := base("crashy", "node faults: crashes between and inside steps, lost and torn writes, QoS2 state loss")
	crashy.CrashPPM = 10_000
	crashy.StateLossPPM = 5_000
	crashy.CrashPointPPM = 300
	crashy.LoseUnsyncedPPM = 500_000
	crashy.TornPPM = 200_000
	swarm := base("swarm", "every fault, with probabilities drawn from the seed (swarm testing)")
	return []Profile{calm, lossy, crashy, swarm}
}

// ProfileByName returns the named profile (unresolved: swarm has no
// probabilities until Resolve).
func ProfileByName(name string) (Profile, error) {
	var names []string
	for _, p := range Profiles() {
		if p.Name == name {
			return p, nil
		}
		names = append(names, p.Name)
	}
	return Profile{}, fmt.Errorf("%w %q (known: %s)", ErrUnknownProfile, name, strings.Join(names, ", "))
}

// resolve fills in swarm's probabilities from r: each fault is on or off by a
// coin flip and, when on, draws its rate from a wide range, so different
// seeds explore different mixes of faults (as TigerBeetle's VOPR does). A
// zero draw leaves every fault off. Other profiles are returned unchanged.
func (p Profile) resolve(r *Rand) Profile {
	if p.Name != "swarm" {
		return p
	}
	rate := func(max int) int {
		if !r.Chance(1, 2) {
			return 0
		}
		return int(r.Between(1, int64(max)))
	}
	p.ChunkPPM = rate(500_000)
	p.ResetPPM = rate(10_000)
	p.HalfOpenPPM = rate(5_000)
	p.PartitionPPM = rate(30_000)
	p.SlowPPM = rate(30_000)
	p.CrashPPM = rate(30_000)
	p.StateLossPPM = rate(10_000)
	p.CrashPointPPM = rate(2_000)
	p.LoseUnsyncedPPM = rate(1_000_000)
	p.TornPPM = rate(1_000_000)
	p.LatencyMax = p.LatencyMin + r.Between(0, int64(50*ms))
	return p
}

// Validate reports the first out-of-range field of a profile.
func (p Profile) Validate() error {
	ppm := []struct {
		name string
		v    int
	}{{"ChunkPPM", p.ChunkPPM}, {"ResetPPM", p.ResetPPM}, {"HalfOpenPPM", p.HalfOpenPPM},
		{"PartitionPPM", p.PartitionPPM}, {"SlowPPM", p.SlowPPM}, {"CrashPPM", p.CrashPPM},
		{"StateLossPPM", p.StateLossPPM}, {"CrashPointPPM", p.CrashPointPPM},
		{"LoseUnsyncedPPM", p.LoseUnsyncedPPM}, {"TornPPM", p.TornPPM}}
	for _, f := range ppm {
		if f.v < 0 || f.v > 1_000_000 {
			return fmt.Errorf("profile %s: %s %d is outside 0..1000000", p.Name, f.name, f.v)
		}
	}
	spans := []struct {
		name   string
		lo, hi engine.Duration
	}{{"Latency", p.LatencyMin, p.LatencyMax}, {"Restart", p.RestartMin, p.RestartMax}, {"Backoff", p.BackoffMin, p.BackoffMax}}
	for _, s := range spans {
		if s.lo < 0 || s.hi < s.lo {
			return fmt.Errorf("profile %s: %sMin %d and %sMax %d are not 0 <= min <= max", p.Name, s.name, s.lo, s.name, s.hi)
		}
	}
	if p.SlowExtra < 0 {
		return fmt.Errorf("profile %s: SlowExtra %d is negative", p.Name, p.SlowExtra)
	}
	return nil
}
