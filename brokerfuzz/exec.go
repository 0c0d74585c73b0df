package brokerfuzz

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mqttlab/mqttlab/engine/packet"
)

// Target is a broker under test, reached at Addr.
type Target struct {
	// Name describes it in reports.
	Name string
	// Addr is its TCP address.
	Addr string
	// Exited, if set, reports whether the broker's process has ended (and
	// how): a managed broker. Nil: a broker the fuzzer does not manage.
	Exited func() (bool, string)
}

// Timing bounds how long the executor waits for a broker. Zero fields take
// DefaultTiming's.
type Timing struct {
	// Close is how long a connection may stay open after a packet the spec
	// says closes it.
	Close time.Duration
	// Answer is how long a request may wait for its answer.
	Answer time.Duration
	// Quiet is the pause between steps once the broker stopped answering.
	Quiet time.Duration
	// Probe bounds the liveness probe (a fresh CONNECT and PINGREQ).
	Probe time.Duration
}

// DefaultTiming is the executor's default patience: generous against a
// loaded machine, since a slow broker must never read as a broken one.
var DefaultTiming = Timing{Close: 2 * time.Second, Answer: 3 * time.Second, Quiet: 5 * time.Millisecond, Probe: 5 * time.Second}

func (t Timing) orDefault() Timing {
	d := DefaultTiming
	if t.Close > 0 {
		d.Close = t.Close
	}
	if t.Answer > 0 {
		d.Answer = t.Answer
	}
	if t.Quiet > 0 {
		d.Quiet = t.Quiet
	}
	if t.Probe > 0 {
		d.Probe = t.Probe
	}
	return d
}

// received is one packet the broker sent on a connection.
type received struct {
	typ       packet.Type
	id        uint16
	reason    packet.ReasonCode
	afterStep int // the index of the last step written when it was read
	marker    string
}

// connObs is what one connection saw.
type connObs struct {
	mu          sync.Mutex
	recv        []received
	undecodable string // the codec's refusal of the broker's bytes, if any
	closed      bool   // the broker ended it (EOF or reset), not the fuzzer
	closedAfter int
	dialErr     error
}

// observation is what a run of a case saw.
type observation struct {
	conns   map[int]*connObs
	watch   []string // markers the watching subscriber received
	crashed string   // the broker's process ended: how
	hung    string   // the liveness probe failed: how
	tm      Timing   // the bounds it ran with
}

// runner executes cases against one target.
type runner struct {
	t      Target
	tm     Timing
	n      atomic.Uint64 // cases run, for client ids
	step   atomic.Int64
	active atomic.Int64 // unix nanos of the last packet read on any connection
	// kick wakes a waiting executor when a reader decoded a packet or saw
	// its connection end (buffered 1; a stale kick only costs a check).
	kick chan struct{}
}

// newRunner is a runner of cases against t.
func newRunner(t Target, tm Timing) *runner {
	return &runner{t: t, tm: tm.orDefault(), kick: make(chan struct{}, 1)}
}

// wake kicks a waiting executor.
func (r *runner) wake() {
	select {
	case r.kick <- struct{}{}:
	default:
	}
}

// wait returns when done reports true, or at deadline, or when no packet
// came on any connection for Quiet since from (if quiet is set). It sleeps
// until a reader decodes a packet or a connection ends, not in fixed steps,
// so an awaited answer ends the wait as soon as it is read.
func (r *runner) wait(from, deadline time.Time, quiet bool, done func() bool) {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		if done() {
			return
		}
		now := time.Now()
		left := deadline.Sub(now)
		if quiet {
			idle := now.Sub(time.Unix(0, max(r.active.Load(), from.UnixNano())))
			left = min(left, r.tm.Quiet-idle)
		}
		if left <= 0 {
			return
		}
		timer.Reset(left)
		select {
		case <-r.kick:
		case <-timer.C:
		}
		if !timer.Stop() {
			select { // drain a fire that raced the kick
			case <-timer.C:
			default:
			}
		}
	}
}

// errWatcher is a broker that would not take the watching subscriber.
var errWatcher = errors.New("the watching subscriber could not subscribe")

// run executes c and observes the broker.
func (r *runner) run(c Case, e *expect) (*observation, error) {
	n := r.n.Add(1)
	obs := &observation{conns: map[int]*connObs{}, tm: r.tm}
	w, err := r.watch(n, obs)
	if err != nil {
		obs.probe(r, n)
		return obs, err
	}
	socks := map[int]net.Conn{}
	defer func() {
		for _, s := range socks {
			s.Close()
		}
		w.Close()
	}()
	last := time.Now()
	for i, st := range c.Steps {
		if !e.sent[i] {
			continue
		}
		r.step.Store(int64(i))
		s, co := socks[st.Conn], obs.conns[st.Conn]
		if co == nil {
			co = &connObs{closedAfter: -1}
			obs.conns[st.Conn] = co
			var err error
			if s, err = net.DialTimeout("tcp", r.t.Addr, r.tm.Answer); err != nil {
				co.dialErr = err
				continue
			}
			socks[st.Conn] = s
			go r.read(s, e.conns[st.Conn].readVersion(st.Version), co)
		}
		if co.dialErr != nil || co.isClosed() {
			continue
		}
		_ = s.SetWriteDeadline(time.Now().Add(r.tm.Answer))
		_, _ = s.Write(st.Data) // a broker that closed is seen by the reader
		last = time.Now()
		r.settle(last, func() bool { return stepDone(e, obs, i, st.Conn) })
	}
	r.await(e, obs, last)
	if ms := forwardable(e); len(ms) > 0 { // the watcher's copies of refused publications
		r.wait(time.Now(), time.Now().Add(4*r.tm.Quiet), false, func() bool { return obs.sawAll(ms) })
	}
	obs.probe(r, n)
	return obs, nil
}

// stepDone reports whether the broker did all that step i on conn calls for:
// answered its requests, routed its publications to the watcher, or closed
// the connection. A refused packet or a DISCONNECT is done only once its
// connection closed.
func stepDone(e *expect, obs *observation, i, conn int) bool {
	ce, co := e.conns[conn], obs.conns[conn]
	if co == nil || co.dialErr != nil || co.isClosed() {
		return true
	}
	if ce.refused == i || ce.disconnected && ce.discStep == i {
		return false
	}
	var upTo []request
	for _, q := range ce.requests {
		if q.step <= i {
			upTo = append(upTo, q)
		}
	}
	for _, q := range co.unanswered(upTo) {
		if q.step == i {
			return false
		}
	}
	var ms []string
	for _, p := range ce.pubs {
		if p.step == i {
			ms = append(ms, p.marker)
		}
	}
	if len(ms) == 0 {
		return true
	}
	// as many copies of each marker as valid PUBLISH packets carried it so
	// far, on any connection (a doubled step repeats its marker)
	want := map[string]int{}
	for _, oc := range e.conns {
		for _, p := range oc.pubs {
			if p.step <= i {
				want[p.marker]++
			}
		}
	}
	got := map[string]int{}
	for _, m := range obs.watched() {
		got[m]++
	}
	for _, m := range ms {
		if got[m] < want[m] {
			return false
		}
	}
	return true
}

// forwardable returns the markers of refused packets the forwarded oracle
// judges: the ones whose copy at the watcher is a finding.
func forwardable(e *expect) []string {
	var out []string
	for _, ce := range e.conns {
		if ce.judged() && e.attributable(ce) {
			out = append(out, ce.marker)
		}
	}
	return out
}

// sawAll reports whether the watcher received every marker of ms.
func (obs *observation) sawAll(ms []string) bool {
	seen := map[string]bool{}
	for _, m := range obs.watched() {
		seen[m] = true
	}
	for _, m := range ms {
		if !seen[m] {
			return false
		}
	}
	return true
}

// readVersion is the version to read the broker's answers in: the
// connection's CONNECT's, when the codec read one in the case, else the
// version the step meant.
func (ce *connExpect) readVersion(meant byte) byte {
	if ce != nil && (ce.version == 4 || ce.version == 5) {
		return ce.version
	}
	return meant
}

// settle waits after the write at t until the step is done (done: its
// answers read, its publications routed, its connection closed), or else
// until no packet came for Quiet since t (at most 20 Quiets): awaiting the
// step's effects orders the steps across connections as the quiet wait
// does, without paying a Quiet for every step the broker already answered.
func (r *runner) settle(t time.Time, done func() bool) {
	r.wait(t, t.Add(20*r.tm.Quiet), true, done)
}

// await waits until every refused connection is closed (at most Close
// after the last write) and every request answered or its connection
// closed (at most Answer).
func (r *runner) await(e *expect, obs *observation, last time.Time) {
	r.wait(last, last.Add(r.tm.Close), false, func() bool {
		refusedOpen, unanswered := pending(e, obs)
		return !unanswered && !refusedOpen
	})
	r.wait(last, last.Add(max(r.tm.Close, r.tm.Answer)), false, func() bool {
		_, unanswered := pending(e, obs)
		return !unanswered
	})
}

// pending reports whether a refused connection is still open and whether
// a request on an open connection is still unanswered.
func pending(e *expect, obs *observation) (refusedOpen, unanswered bool) {
	for conn, ce := range e.conns {
		co := obs.conns[conn]
		if co == nil || co.dialErr != nil || co.isClosed() {
			continue
		}
		if ce.refused >= 0 {
			refusedOpen = true
		} else if !ce.disconnected && len(co.unanswered(ce.requests)) > 0 {
			unanswered = true
		}
	}
	return refusedOpen, unanswered
}

func (co *connObs) isClosed() bool {
	co.mu.Lock()
	defer co.mu.Unlock()
	return co.closed
}

// unanswered returns the requests that no received packet answers.
func (co *connObs) unanswered(reqs []request) []request {
	co.mu.Lock()
	defer co.mu.Unlock()
	var out []request
	used := make([]bool, len(co.recv))
	for _, q := range reqs {
		found := false
		for j, p := range co.recv {
			if !used[j] && p.typ == q.want && p.id == q.id {
				used[j], found = true, true
				break
			}
		}
		if !found {
			out = append(out, q)
		}
	}
	return out
}

// read decodes what the broker sends on s until it ends.
func (r *runner) read(s net.Conn, v byte, co *connObs) {
	d := packet.NewDecoder(packet.Version(v), 0)
	buf := make([]byte, 16*1024)
	for {
		n, err := s.Read(buf)
		if n > 0 {
			r.active.Store(time.Now().UnixNano())
			d.Feed(buf[:n])
			co.decode(d, int(r.step.Load()))
			r.wake()
		}
		if err != nil {
			co.mu.Lock()
			if !errors.Is(err, net.ErrClosed) { // not the fuzzer's own close
				co.closed, co.closedAfter = true, int(r.step.Load())
			}
			co.mu.Unlock()
			r.wake()
			return
		}
	}
}

// decode records the whole packets d holds.
func (co *connObs) decode(d *packet.Decoder, step int) {
	co.mu.Lock()
	defer co.mu.Unlock()
	for co.undecodable == "" {
		p, err := d.Next()
		if err != nil {
			co.undecodable = err.Error()
			return
		}
		if p == nil {
			return
		}
		co.recv = append(co.recv, receivedOf(p, step))
	}
}

// receivedOf keeps what the oracles read of a packet.
func receivedOf(p packet.Packet, step int) received {
	rc := received{typ: p.Type(), afterStep: step}
	switch p := p.(type) {
	case *packet.Connack:
		rc.reason = p.Reason
	case *packet.Puback:
		rc.id, rc.reason = p.PacketID, p.Reason
	case *packet.Pubrec:
		rc.id, rc.reason = p.PacketID, p.Reason
	case *packet.Pubrel:
		rc.id, rc.reason = p.PacketID, p.Reason
	case *packet.Pubcomp:
		rc.id, rc.reason = p.PacketID, p.Reason
	case *packet.Suback:
		rc.id, rc.reason = p.PacketID, firstReason(p.Reasons)
	case *packet.Unsuback:
		rc.id, rc.reason = p.PacketID, firstReason(p.Reasons)
	case *packet.Disconnect:
		rc.reason = p.Reason
	case *packet.Publish:
		rc.id, rc.marker = p.PacketID, markerIn(p.Payload)
	}
	return rc
}

// firstReason is a SUBACK's or UNSUBACK's first reason code (0 if none).
func firstReason(rs []packet.ReasonCode) packet.ReasonCode {
	if len(rs) == 0 {
		return 0
	}
	return rs[0]
}

// watch connects the watching subscriber (MQTT 5.0, or 3.1.1 if the broker
// refuses 5.0) to "#" at QoS 0; its reader collects the markers of every
// PUBLISH it gets.
func (r *runner) watch(n uint64, obs *observation) (net.Conn, error) {
	var errs []string
	for _, v := range []byte{5, 4} {
		s, err := r.session(v, fmt.Sprintf("fzw-%d", n))
		if err != nil {
			errs = append(errs, fmt.Sprintf("v%d: %v", v, err))
			continue
		}
		if err := subscribeAll(s, v); err != nil {
			s.Close()
			errs = append(errs, fmt.Sprintf("v%d: %v", v, err))
			continue
		}
		_ = s.SetReadDeadline(time.Time{})
		co := &connObs{closedAfter: -1}
		go r.read(s, v, co)
		obs.watchFrom(co)
		return s, nil
	}
	return nil, fmt.Errorf("%w: %s", errWatcher, strings.Join(errs, "; "))
}

// watchFrom makes obs read the watcher's markers from co when judged.
func (obs *observation) watchFrom(co *connObs) { obs.conns[0] = co }

// watched returns the markers the watcher received.
func (obs *observation) watched() []string {
	co := obs.conns[0]
	if co == nil {
		return nil
	}
	co.mu.Lock()
	defer co.mu.Unlock()
	var out []string
	for _, p := range co.recv {
		if p.typ == packet.PUBLISH && p.marker != "" {
			out = append(out, p.marker)
		}
	}
	return out
}

// session dials and connects a clean session of version v; it returns once
// the CONNACK accepted it.
func (r *runner) session(v byte, id string) (net.Conn, error) {
	s, err := net.DialTimeout("tcp", r.t.Addr, r.tm.Probe)
	if err != nil {
		return nil, err
	}
	_ = s.SetDeadline(time.Now().Add(r.tm.Probe))
	if _, err := s.Write(rawConnect(connectFields{protoName: "MQTT", level: v, flags: 0x02, keepAlive: 60, clientID: id})); err != nil {
		s.Close()
		return nil, err
	}
	p, err := readOne(s, v)
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("CONNECT: %w", err)
	}
	if ca, ok := p.(*packet.Connack); !ok || ca.Reason != 0 {
		s.Close()
		return nil, fmt.Errorf("CONNECT answered %s", describe(p))
	}
	return s, nil
}

// subscribeAll subscribes s to "#" at QoS 0 and waits for the SUBACK.
func subscribeAll(s net.Conn, v byte) error {
	if _, err := s.Write(rawSubscribe(v, 0x82, 1, nil, []string{"#"}, []byte{0})); err != nil {
		return err
	}
	p, err := readOne(s, v)
	if err != nil {
		return fmt.Errorf("SUBSCRIBE: %w", err)
	}
	if sa, ok := p.(*packet.Suback); !ok || len(sa.Reasons) != 1 || sa.Reasons[0] >= 0x80 {
		return fmt.Errorf("SUBSCRIBE # answered %s", describe(p))
	}
	return nil
}

// readOne reads one packet of version v from s (within s's deadline).
func readOne(s net.Conn, v byte) (packet.Packet, error) {
	d := packet.NewDecoder(packet.Version(v), 0)
	buf := make([]byte, 4096)
	for {
		n, err := s.Read(buf)
		d.Feed(buf[:n])
		if p, derr := d.Next(); derr != nil || p != nil {
			return p, derr
		}
		if err != nil {
			return nil, err
		}
	}
}

// describe names a packet for a message.
func describe(p packet.Packet) string {
	switch p := p.(type) {
	case nil:
		return "nothing"
	case *packet.Connack:
		return fmt.Sprintf("CONNACK %s", p.Reason)
	case *packet.Suback:
		return fmt.Sprintf("SUBACK %v", p.Reasons)
	}
	return p.Type().String()
}

// probe checks the broker is alive after a case: its process runs (if
// managed) and a fresh connection gets CONNACK and PINGRESP. A probe that
// fails is tried again, twice, each on a fresh connection with the same
// bound: a broker that hangs stays hung, while one that a loaded host
// (memory pressure, a busy core) stalled for a few seconds answers a later
// probe, and is not a hang.
func (obs *observation) probe(r *runner, n uint64) {
	var err error
	for try := 0; try < probeTries; try++ {
		if r.t.Exited != nil {
			if done, how := r.t.Exited(); done {
				obs.crashed = how
				return
			}
		}
		if err = r.probeOnce(fmt.Sprintf("fzp-%d", n)); err == nil {
			return
		}
		if r.t.Exited != nil {
			time.Sleep(100 * time.Millisecond) // a process that is dying
			if done, how := r.t.Exited(); done {
				obs.crashed = how
				return
			}
		}
	}
	obs.hung = fmt.Sprintf("%d fresh connections in turn got no answer to CONNECT and PINGREQ within %v each: %v", probeTries, r.tm.Probe, err)
}

// probeTries is how many probes in a row must fail for a hang.
const probeTries = 3

// probeOnce opens a fresh connection, sends CONNECT and PINGREQ, and
// reports what went wrong ("" and nil: both answered).
func (r *runner) probeOnce(id string) error {
	s, err := r.session(4, id)
	if err != nil {
		return err
	}
	defer s.Close()
	if _, err = s.Write([]byte{0xc0, 0}); err != nil {
		return err
	}
	p, err := readOne(s, 4)
	if err == nil && p.Type() != packet.PINGRESP {
		err = fmt.Errorf("PINGREQ answered %s", describe(p))
	}
	return err
}
