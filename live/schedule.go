package live

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"time"
)

// FaultKind is a kind of real fault the live tester injects.
type FaultKind string

// Fault kinds.
const (
	FaultBrokerKill  FaultKind = "broker-kill"  // SIGKILL the broker's process group, restart it from its data dir
	FaultBrokerPause FaultKind = "broker-pause" // SIGSTOP the broker, SIGCONT after the fault's length
	FaultClientKill  FaultKind = "client-kill"  // kill a client (SIGKILL of an external program; a crash of ours), restart it
	FaultClientPause FaultKind = "client-pause" // SIGSTOP an external client program, SIGCONT later
	FaultCut         FaultKind = "cut"          // close a client's connections in the proxy
	FaultBlackHole   FaultKind = "blackhole"    // drop one direction of a client's connection; cut at the end
	FaultSlow        FaultKind = "slow"         // forward every connection in small chunks with pauses
)

// FaultKinds lists every kind, in the order -faults documents them.
func FaultKinds() []FaultKind {
	return []FaultKind{FaultBrokerKill, FaultBrokerPause, FaultClientKill, FaultClientPause, FaultCut, FaultBlackHole, FaultSlow}
}

// ErrFaults reports a bad fault selection.
var ErrFaults = errors.New("live: bad fault kinds")

// ParseFaults reads a comma-separated list of fault kinds; "none" is the
// empty list, "all" every kind, "client" the client-side ones (client-kill,
// client-pause, cut, blackhole, slow) and "broker" the broker's.
func ParseFaults(s string) ([]FaultKind, error) {
	var out []FaultKind
	seen := map[FaultKind]bool{}
	add := func(ks ...FaultKind) {
		for _, k := range ks {
			if !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	for _, f := range strings.Split(s, ",") {
		switch f = strings.TrimSpace(f); f {
		case "none", "":
		case "all":
			add(FaultKinds()...)
		case "client":
			add(FaultClientKill, FaultClientPause, FaultCut, FaultBlackHole, FaultSlow)
		case "broker":
			add(FaultBrokerKill, FaultBrokerPause)
		default:
			k := FaultKind(f)
			if !k.valid() {
				names := make([]string, 0, 8)
				for _, k := range FaultKinds() {
					names = append(names, string(k))
				}
				return nil, fmt.Errorf("%w: unknown kind %q; known: %s, or all, client, broker, none", ErrFaults, f, strings.Join(names, ", "))
			}
			add(k)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].order() < out[j].order() })
	return out, nil
}

func (k FaultKind) valid() bool { return k.order() >= 0 }

func (k FaultKind) order() int {
	for i, x := range FaultKinds() {
		if x == k {
			return i
		}
	}
	return -1
}

// Fault is one scheduled fault.
type Fault struct {
	At     time.Duration // from the start of the fault phase
	Kind   FaultKind
	Target string        // "broker", a client id, or "" (every connection)
	Dir    Direction     // blackhole: which direction
	Length time.Duration // how long it lasts (downtime, pause, hole, slowness)
}

// String is the fault as the schedule prints it.
func (f Fault) String() string {
	s := fmt.Sprintf("%8.3fs %-12s", f.At.Seconds(), f.Kind)
	if f.Target != "" {
		s += " " + f.Target
	}
	if f.Kind == FaultBlackHole {
		s += " " + f.Dir.String()
	}
	if f.Kind != FaultCut {
		s += fmt.Sprintf(" for %v", f.Length)
	}
	return s
}

// ScheduleSpec is what a fault schedule is drawn from.
type ScheduleSpec struct {
	Seed     uint64
	Kinds    []FaultKind
	Duration time.Duration // the fault phase
	Interval time.Duration // mean gap between faults
	Clients  []string      // every client id that can be a target
	Pausable []string      // the client ids that run as processes (client-pause targets)
}

// Schedule draws the fault schedule: the same spec always gives the same
// schedule (one PCG seeded by Seed). Gaps are uniform in [Interval/2,
// 3*Interval/2]; each fault's kind, target and length are drawn in turn;
// a kind without a possible target (client-pause with no client process)
// is skipped. Faults never overlap the end of the phase.
func Schedule(spec ScheduleSpec) []Fault {
	if len(spec.Kinds) == 0 || spec.Interval <= 0 {
		return nil
	}
	r := rand.New(rand.NewPCG(spec.Seed, 0x6c697665)) // "live"
	var out []Fault
	at := time.Duration(0)
	for {
		at += spec.Interval/2 + time.Duration(r.Int64N(int64(spec.Interval)+1))
		if at >= spec.Duration {
			return out
		}
		f := Fault{At: at, Kind: spec.Kinds[r.IntN(len(spec.Kinds))]}
		f.Length = 100*time.Millisecond + time.Duration(r.Int64N(int64(spec.Interval)))
		f.Length = min(f.Length, spec.Duration-at)
		switch f.Kind {
		case FaultBrokerKill, FaultBrokerPause:
			f.Target = "broker"
		case FaultClientPause:
			if len(spec.Pausable) == 0 {
				continue
			}
			f.Target = spec.Pausable[r.IntN(len(spec.Pausable))]
		case FaultClientKill, FaultCut, FaultBlackHole:
			if len(spec.Clients) == 0 {
				continue
			}
			f.Target = spec.Clients[r.IntN(len(spec.Clients))]
			f.Dir = Direction(r.IntN(2))
		}
		out = append(out, f)
	}
}
