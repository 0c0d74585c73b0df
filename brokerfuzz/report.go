package brokerfuzz

import (
	"fmt"
	"strings"
	"time"
)

// oracleReading says in plain words what each oracle's finding means and
// which statement it rests on.
var oracleReading = map[string]string{
	OracleCrash:      "The broker's process ended while it handled this input. No input may crash a server; the spec's error handling (§4.8 in 3.1.1, §4.13 in 5.0) closes the offending connection and nothing else.",
	OracleHang:       "After this input the broker no longer answered a fresh connection's CONNECT and PINGREQ within the probe's bound ([MQTT-3.12.4-1]: a Server MUST answer PINGREQ).",
	OracleLeftOpen:   "The client sent a packet the spec calls malformed or a protocol error (the codec names the rule), and the broker kept the connection open. 3.1.1 [MQTT-4.8.0-1] and 5.0 [MQTT-4.13.1-1] require the Server to close the Network Connection (in 5.0 after a DISCONNECT with a reason code where one applies).",
	OracleAnswered:   "The broker acknowledged a packet it must refuse: the packet was processed as if valid.",
	OracleForwarded:  "The payload of a packet the broker must refuse reached a subscriber on another connection: a malformed publication was routed.",
	OracleReason:     "A 5.0 broker refused a packet with a reason code below 0x80, a success code (5.0 §2.4: 0x80 and above are failures).",
	OracleUnanswered: "A valid request (the codec accepts it) got no answer while the broker kept its connection open. The statement cited requires the answer.",
	OracleGrowth:     "The broker's memory or open descriptors grew over cases that each closed every connection and kept no state (clean sessions, no retained message, no will).",
}

// Markdown renders the report: the run, then a section per finding with its
// reading, its causes, the shrunk case and the command that replays it.
// prog names simrun in the commands.
func Markdown(rep *Report, prog string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# fuzz-broker: %s\n\n", rep.Target)
	state := "completed"
	if rep.Interrupted {
		state = "interrupted"
	}
	fmt.Fprintf(&b, "Seed %d; %d cases in %s (%.0f/s), %s; corpus %d behaviourally distinct cases.\n", rep.Seed, rep.Execs, rep.Elapsed.Round(time.Second),
		float64(rep.Execs)/max(rep.Elapsed.Seconds(), 0.001), state, rep.Corpus)
	if rep.Reference != "" {
		fmt.Fprintf(&b, "Reference broker (differential): %s.\n", rep.Reference)
	}
	fmt.Fprintf(&b, "\n%d findings.\n\n", len(rep.Findings))
	for i, fd := range rep.Findings {
		writeFinding(&b, i+1, fd, prog)
	}
	if len(rep.RefFindings) > 0 {
		fmt.Fprintf(&b, "## The reference broker's own findings\n\n")
		for i, fd := range rep.RefFindings {
			writeFinding(&b, i+1, fd, prog)
		}
	}
	if len(rep.Usage) > 0 {
		fmt.Fprintf(&b, "## Resources of the broker under test\n\n")
		for _, u := range rep.Usage {
			fmt.Fprintf(&b, "- %s\n", u)
		}
	}
	return b.String()
}

func writeFinding(b *strings.Builder, n int, fd *Finding, prog string) {
	fmt.Fprintf(b, "## %d. %s\n\n", n, fd.Title())
	if fd.Cause != "" {
		fmt.Fprintf(b, "The broker does not enforce [%s]: the codec refuses these packets under it (the rule is quoted in the shrunk case's detail), and the broker then did what the oracles below say instead of closing the connection (3.1.1 [MQTT-4.8.0-1], 5.0 [MQTT-4.13.1-1]).\n\n", strings.Trim(strings.TrimPrefix(fd.Key, "not enforced "), "[]"))
	}
	for _, o := range keys(fd.Oracles) {
		fmt.Fprintf(b, "- **%s** (%d): %s\n", o, fd.Oracles[o], oracleReading[o])
	}
	fmt.Fprintf(b, "- %d violations, packet types %s; the shrunk case has %d steps.\n", fd.Count, counts(fd.Packets), fd.MinSteps)
	fmt.Fprintf(b, "- First tripped by case %d, %s into the run.\n", fd.FoundAt, fd.FoundAfter.Round(100*time.Millisecond))
	if fd.Reference != "" {
		fmt.Fprintf(b, "- Reference broker on the shrunk case: %s.\n", map[string]string{"same": "broke the same rule", "kept": "kept the rule"}[fd.Reference])
	}
	fmt.Fprintf(b, "- Shrunk: %s\n\n", fd.MinViolation.Detail)
	if len(fd.Min.Steps) > 0 {
		fmt.Fprintf(b, "```\n%s```\n\n", fd.Min)
	}
	if fd.File != "" {
		fmt.Fprintf(b, "Replay against any broker: `%s fuzz-broker -replay %s` (add -broker or -broker-addr).\n\n", prog, fd.File)
	}
}
