package brokerfuzz

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// The growth oracle: every case closes all its connections and keeps
// nothing at the broker (clean sessions, no retained message, no will), so
// a broker's memory and descriptors after thousands of cases should be
// what they were after the first few. It samples the managed broker's
// process (ProcUsage) once warm, every usageEvery cases, and at the end
// after a pause; growth past the bounds is a finding.
const (
	usageWarm  = 50
	usageEvery = 500
	// growthFDs and growthRSS bound what the broker may hold more at the
	// end than once warm.
	growthFDs = 64
	growthRSS = 128 << 20
)

// usage samples at the warm-up mark and every usageEvery cases.
func (f *fuzzer) usage(rep *Report, base *[2]int64) {
	if f.cfg.Usage == nil || f.execs < usageWarm || (f.execs != usageWarm && f.execs%usageEvery != 0) {
		return
	}
	time.Sleep(200 * time.Millisecond) // the last case's connections close
	rss, fds, err := f.cfg.Usage()
	if err != nil {
		return
	}
	if f.execs == usageWarm {
		*base = [2]int64{rss, fds}
	}
	rep.Usage = append(rep.Usage, fmt.Sprintf("after %d cases: %d MiB resident, %d open descriptors", f.execs, rss>>20, fds))
}

// usageEnd takes the last sample and judges growth.
func (f *fuzzer) usageEnd(rep *Report, base [2]int64) {
	if f.cfg.Usage == nil || f.execs < usageWarm || base[0] == 0 {
		return
	}
	time.Sleep(500 * time.Millisecond)
	rss, fds, err := f.cfg.Usage()
	if err != nil {
		return
	}
	rep.Usage = append(rep.Usage, fmt.Sprintf("at the end, %d cases: %d MiB resident, %d open descriptors", f.execs, rss>>20, fds))
	var what []string
	if fds-base[1] > growthFDs {
		what = append(what, fmt.Sprintf("open descriptors grew from %d to %d", base[1], fds))
	}
	if rss-base[0] > growthRSS {
		what = append(what, fmt.Sprintf("resident memory grew from %d MiB to %d MiB", base[0]>>20, rss>>20))
	}
	if len(what) > 0 {
		v := Violation{Oracle: OracleGrowth, Rule: "§4.8", Detail: strings.Join(what, "; ") + fmt.Sprintf(" over %d cases that each closed every connection and kept nothing", f.execs-usageWarm)}
		f.byKey[v.Key()] = &Finding{Key: v.Key(), Oracle: v.Oracle, Rule: v.Rule, Count: 1, First: v, MinViolation: v, Oracles: map[string]int{OracleGrowth: 1},
			FoundAt: f.execs, FoundAfter: time.Since(f.start)}
	}
}

// ProcUsage samples process pid from /proc: resident memory in bytes and
// the number of open file descriptors.
func ProcUsage(pid int) (rss, fds int64, err error) {
	status, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, 0, err
	}
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			rss = kb << 10
		}
	}
	ents, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/fd")
	if err != nil {
		return rss, 0, err
	}
	return rss, int64(len(ents)), nil
}
