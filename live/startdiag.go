package live

import (
	"context"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/mqttlab/mqttlab/engine/packet"
	"github.com/mqttlab/mqttlab/model"
)

// startPoll is how often a start in progress is checked for a reason it
// cannot succeed, so that a subject that will not start is reported within
// a second or two, not at the start timeout.
const startPoll = 100 * time.Millisecond

// refusalsToGiveUp is how many connections the broker must have closed
// or refused before a start is judged hopeless (one may be a race).
const refusalsToGiveUp = 2

// reachable dials an unmanaged broker once, so a wrong -broker-addr is
// reported at once with the connection error.
func reachable(addr string) error {
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		return fmt.Errorf("%w: cannot connect to the broker at %s: %v", ErrNotStarted, addr, err)
	}
	return c.Close()
}

// waitSubscribed waits until subscriber c's SUBACK went through, checking
// every startPoll why it might never: its program exited, the broker
// exited, the proxy cannot reach the broker, or the broker refuses or
// closes its CONNECTs (a version hint then). The error quotes the last
// lines of the subscriber's and the broker's output.
func (t *tester) waitSubscribed(c client) error {
	deadline := time.Now().Add(t.cfg.StartTimeout)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), startPoll)
		_, err := t.rec.Wait(ctx, 0, func(e model.Event) bool { return e.Kind == model.Subscribed && e.Node == c.id() })
		cancel()
		if err == nil {
			return nil
		}
		why := t.whyNotStarting(c)
		if why == "" && time.Now().After(deadline) {
			why = fmt.Sprintf("not subscribed within %v", t.cfg.StartTimeout)
		}
		if why != "" {
			return fmt.Errorf("%w: subscriber %s did not start: %s%s", ErrNotStarted, c.id(), why, t.outputTails(c))
		}
	}
}

// whyNotStarting returns why subscriber c cannot start, or "" while it
// still may.
func (t *tester) whyNotStarting(c client) string {
	if p := subjectProcess(c); p != nil && p.Exited() {
		return fmt.Sprintf("its command exited with status %d%s", p.ExitCode(), ExecHint(p.ExitCode()))
	}
	if t.brk != nil {
		if p := t.brk.current(); p != nil && p.Exited() {
			return fmt.Sprintf("the broker exited with status %d", p.ExitCode())
		}
	}
	h := t.rec.History()
	if why := t.connectRefusals(&h, c.id()); why != "" {
		return why
	}
	if err := t.proxy.DialErr(); err != nil {
		return fmt.Sprintf("the proxy cannot reach the broker: %v", err)
	}
	return ""
}

// connectRefusals reads h for a broker that refuses client id's CONNECTs:
// a CONNACK with an error code (0x01 in 3.1.1 and 0x84 in 5.0 say the
// protocol version is not supported), or connections closed after a
// CONNECT without a CONNACK, which is how a broker that does not speak the
// client's version may answer.
func (t *tester) connectRefusals(h *model.History, id string) string {
	closedUnacked, open, acked := 0, false, false
	for i := range h.Events {
		e := &h.Events[i]
		if e.Node != model.BrokerNode || e.Peer != id {
			continue
		}
		switch {
		case e.Kind == model.ConnOpened:
			open, acked = true, false
		case e.Kind == model.Sent && e.Packet.Type == model.CONNACK:
			acked = true
			if r := e.Packet.Reason; r != 0 {
				return fmt.Sprintf("the broker refused its CONNECT with CONNACK %#x (%s)%s", r, connackText(r), t.versionHint(id, r == 0x01 || r == 0x84))
			}
		case e.Kind == model.ConnClosed && open:
			open = false
			if !acked {
				closedUnacked++
			}
		}
	}
	if closedUnacked >= refusalsToGiveUp {
		return fmt.Sprintf("the broker closed %d of its connections without a CONNACK%s", closedUnacked, t.versionHint(id, true))
	}
	return ""
}

// connackText names the CONNACK codes a refused start meets.
func connackText(r uint8) string {
	switch r {
	case 0x01:
		return "3.1.1: unacceptable protocol version"
	case 0x84:
		return "5.0: unsupported protocol version"
	case 0x02, 0x85:
		return "client identifier not valid"
	case 0x03, 0x88:
		return "server unavailable"
	case 0x04, 0x05, 0x86, 0x87:
		return "not authorized or bad user name or password"
	}
	return "refused"
}

// versionHint names the protocol version the client spoke, and how to
// change it, when the refusal may be about the version.
func (t *tester) versionHint(id string, likely bool) string {
	if !likely {
		return ""
	}
	if t.external(id) {
		return ": a broker that does not speak the client's MQTT version answers so; check the version the client command uses"
	}
	v, other := "5.0", "-version 3"
	if t.cfg.Version == packet.V311 {
		v, other = "3.1.1", "-version 5"
	}
	return fmt.Sprintf(": our clients speak MQTT %s (-version); a broker that does not speak %s answers so: try %s", v, v, other)
}

// outputTails quotes the last lines of the subscriber's and the broker's
// output.
func (t *tester) outputTails(c client) string {
	var b strings.Builder
	if p := subjectProcess(c); p != nil {
		b.WriteString(tailLines("its output", p.Stderr()))
	}
	if t.brk != nil && t.brk.current() != nil {
		b.WriteString(tailLines("the broker's output", t.brk.current().Stderr()))
	}
	return b.String()
}

// tailLinesMax bounds the lines quoted of a subject's output.
const tailLinesMax = 10

// tailLines is "; NAME (last lines):\n..." of out's last lines, or "".
func tailLines(name, out string) string {
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) == 1 && lines[0] == "" {
		return ""
	}
	if len(lines) > tailLinesMax {
		lines = lines[len(lines)-tailLinesMax:]
	}
	return fmt.Sprintf("\n%s (last lines):\n  %s", name, strings.Join(lines, "\n  "))
}
