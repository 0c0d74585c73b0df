package live

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/mqttlab/mqttlab/model"
)

// recorded is a history of live/testdata and what judging it must find:
// exactly these promised violations, per invariant.
type recorded struct {
	file    string
	promise model.Policies
	// tolerance is the timing uncertainty the run measured.
	tolerance time.Duration
	want      map[model.Invariant]int
}

// judgeRecorded judges each recorded history as the tester does (Judge)
// and compares the promised violations per invariant.
func judgeRecorded(t *testing.T, cases []recorded) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			h, err := ReadHistory(filepath.Join("testdata", c.file))
			if err != nil {
				t.Fatal(err)
			}
			p := c.promise
			if p.Broker == (model.Policy{}) {
				p = model.Uniform(model.FixedPolicy())
			}
			v := Judge(h, p, c.tolerance)
			got := map[model.Invariant]int{}
			for _, x := range v.Violations {
				got[x.Invariant]++
			}
			if fmt.Sprint(got) != fmt.Sprint(nonZero(c.want)) {
				for _, x := range v.Violations {
					t.Logf("%s at step %d (%s): %s", x.Invariant, x.Step, x.Node, x.Reason)
				}
				t.Errorf("violations %v, want %v", got, nonZero(c.want))
			}
		})
	}
}

func nonZero(m map[model.Invariant]int) map[model.Invariant]int {
	out := map[model.Invariant]int{}
	for k, v := range m {
		if v != 0 {
			out[k] = v
		}
	}
	return out
}

// TestResendNotOverlap (issue 20, class 2): a broker that resends an
// unacknowledged copy on its packet id with DUP=0 breaks one rule, the
// DUP flag [MQTT-3.3.1-1]: one Retransmit violation, not also an Overlap.
// A second copy on a new packet id is another copy [MQTT-3.3.4-2].
func TestResendNotOverlap(t *testing.T) {
	judgeRecorded(t, []recorded{
		{file: "resend-dup0.jsonl", want: map[model.Invariant]int{model.Retransmit: 1}},
		{file: "second-copy.jsonl", want: map[model.Invariant]int{model.Overlap: 1}},
	})
}

// TestKeepAliveTolerance (issue 20, class 4): a client's PINGREQ recorded
// 12 ms past its Keep Alive is within a run's measured timing uncertainty
// (34 ms here) and no violation; one 300 ms past it is still caught; with
// no tolerance (the simulator's exact clock) the 12 ms one is caught too.
func TestKeepAliveTolerance(t *testing.T) {
	const measured = 34 * time.Millisecond
	judgeRecorded(t, []recorded{
		{file: "keepalive-jitter.jsonl", tolerance: measured},
		{file: "keepalive-overshoot.jsonl", tolerance: measured, want: map[model.Invariant]int{model.ClientKeepAlive: 1}},
		{file: "keepalive-jitter.jsonl", want: map[model.Invariant]int{model.ClientKeepAlive: 1}},
	})
}
