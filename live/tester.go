package live

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mqttlab/mqttlab/engine"
	"github.com/mqttlab/mqttlab/engine/packet"
	"github.com/mqttlab/mqttlab/model"
)

// BrokerSubject says which broker a live test judges.
type BrokerSubject struct {
	// Name describes it in the report.
	Name string
	// Command is the command template ({port} {dir}) of a managed broker;
	// empty with Addr.
	Command string
	// Env is added to the broker's environment.
	Env []string
	// Config, if set, is a config file template ({port} {dir}) the tester
	// writes to {dir}/ConfigName before each start.
	Config, ConfigName string
	// Addr is the address of a broker the tester does not manage (no
	// broker faults then).
	Addr string
}

// TestConfig configures a live test run. Zero durations and counts take the
// defaults of DefaultTestConfig.
type TestConfig struct {
	Seed uint64
	// Dir is the run directory (created; earlier contents are kept).
	Dir    string
	Broker BrokerSubject
	// Subscriber and Publisher are external client templates ({port} {id}
	// {topic} {qos} {dir}, and {msg} for the publisher); empty runs this
	// project's engine client (ClientPolicy, file store) in process.
	Subscriber, Publisher string
	// SubscriberAdapter and PublisherAdapter, when set, run the clients of
	// that role as adapters of the long-running protocol (protocol.go)
	// instead of Subscriber and Publisher.
	SubscriberAdapter, PublisherAdapter *Adapter
	Subscribers, Publishers             int
	Topic                               string
	QoS                                 uint8 // subscription and publish QoS, 1 or 2
	// Rate is the messages per second of all publishers together; Messages
	// bounds their number (0: no bound but Duration).
	Rate, Messages int
	// Duration is the length of the fault phase.
	Duration time.Duration
	// Faults are the kinds the schedule draws from, FaultInterval the mean
	// gap between two faults.
	Faults        []FaultKind
	FaultInterval time.Duration
	// Liveness bounds the wait for quiescence after every fault healed.
	Liveness time.Duration
	// StartTimeout bounds each subject's start (the broker's port, a
	// subscriber's SUBACK).
	StartTimeout time.Duration
	// ClientPolicy and Version configure our clients.
	ClientPolicy engine.ClientPolicy
	Version      packet.Version
	// Tolerance is the keep-alive rules' slack (model.Options.Slack):
	// RunTest sets it to the timing uncertainty it measured (jitterProbe).
	Tolerance time.Duration
	// Promise is what the subjects promise, in the model's terms: the
	// broker's and each client's own (model.Policies).
	Promise model.Policies
	// PromiseRoles name the promise of each role for the summary
	// ("broker: broker-periodic", "subscribers: mosquitto-clients").
	PromiseRoles []string
	// Log receives progress lines (nil: discarded).
	Log io.Writer
}

// DefaultTestConfig returns the defaults: 2 subscribers and 2 publishers of
// ours at QoS 2, 50 messages/s for 20 s, a fault every second of every
// kind, a 15 s liveness bound, the fixed engine's promises.
func DefaultTestConfig() TestConfig {
	fixed, _ := engine.PresetByName("fixed")
	return TestConfig{Subscribers: 2, Publishers: 2, Topic: "mqttlab/live", QoS: 2, Rate: 50,
		Duration: 20 * time.Second, Faults: FaultKinds(), FaultInterval: time.Second,
		Liveness: 15 * time.Second, StartTimeout: 10 * time.Second,
		ClientPolicy: fixed.Client, Version: packet.V5, Promise: model.Uniform(model.FixedPolicy()),
		PromiseRoles: []string{"every role: spec"}}
}

// validate checks the config up front.
func (c *TestConfig) validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: "+format, append([]any{ErrConfig}, args...)...)
	}
	switch {
	case c.Dir == "":
		return bad("no run directory")
	case c.Broker.Command == "" && c.Broker.Addr == "":
		return bad("no broker: give a command or an address")
	case c.Subscribers < 1 || c.Publishers < 1:
		return bad("need at least one subscriber and one publisher (got %d, %d)", c.Subscribers, c.Publishers)
	case c.QoS < 1 || c.QoS > 2:
		return bad("QoS %d: the tester judges QoS 1 and 2", c.QoS)
	case c.Rate < 1:
		return bad("rate %d: at least 1 message per second", c.Rate)
	case c.Duration <= 0 || c.Liveness <= 0 || c.StartTimeout <= 0 || c.FaultInterval <= 0:
		return bad("durations must be > 0")
	case c.Topic == "" || strings.ContainsAny(c.Topic, "+#"):
		return bad("topic %q must be a plain topic name", c.Topic)
	}
	if c.Broker.Addr != "" {
		for _, k := range c.Faults {
			if k == FaultBrokerKill || k == FaultBrokerPause {
				return bad("fault %s needs a broker the tester starts (not -broker-addr)", k)
			}
		}
	}
	if err := CheckTemplate(c.Broker.Command, "port", "dir"); err != nil {
		return err
	}
	if err := CheckTemplate(c.Subscriber, "port", "id", "topic", "qos", "dir"); err != nil {
		return err
	}
	return CheckTemplate(c.Publisher, "port", "id", "topic", "qos", "dir", "msg")
}

// tester is one run in progress.
type tester struct {
	cfg   TestConfig
	rec   *Recorder
	sv    *Supervisor
	proxy *Proxy
	brk   *brokerProc
	subs  []client
	pubs  []client
	idRE  *regexp.Regexp
	nonce string

	mu      sync.Mutex
	lastPub map[string]model.Packet // node + "\x00" + msg: its last Received PUBLISH
	persist map[string]bool         // external clients that connected persistently
	issued  int
	skipped int
	busy    int // of skipped: the publisher was up but could not take the message
	// acceptedMsgs are the messages an adapter reported accepted.
	acceptedMsgs  map[string]bool
	adapterErrors int
	schedule      []Fault
	applied       map[FaultKind]int
	// tolerance is the measured timing uncertainty (jitterProbe) over
	// samples probes: the keep-alive rules' slack.
	tolerance time.Duration
	samples   int
}

// RunTest runs a live test: starts the subjects, runs the workload under
// the fault schedule, heals, waits for quiescence, judges the history and
// writes the run directory. It returns an error wrapping ErrConfig or
// ErrNotStarted (and no report) when the run could not start; a ctx
// cancelled mid-run (Ctrl-C) stops it, kills every child and still judges
// and writes what was recorded (Report.Interrupted).
func RunTest(ctx context.Context, cfg TestConfig) (*Report, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	t := &tester{cfg: cfg, rec: NewRecorder(), sv: NewSupervisor(), lastPub: map[string]model.Packet{},
		persist: map[string]bool{}, applied: map[FaultKind]int{}, acceptedMsgs: map[string]bool{}}
	t.nonce = fmt.Sprintf("%06x", cfg.Seed&0xffffff)
	t.idRE = regexp.MustCompile(`lt` + t.nonce + `-[0-9]+`)
	defer t.teardown()
	start := time.Now()
	if err := t.setup(); err != nil {
		return nil, err
	}
	probe := startJitterProbe()
	interrupted := t.runPhases(ctx)
	t.tolerance, t.samples = probe.finish()
	h := t.rec.History()
	t.teardown()
	rep := t.report(h, interrupted, time.Since(start))
	if err := rep.Write(cfg.Dir); err != nil {
		return rep, err
	}
	return rep, nil
}

// setup creates the run directory and starts broker, proxy and clients.
func (t *tester) setup() error {
	for _, d := range []string{"logs", "data/broker", "data/clients"} {
		if err := os.MkdirAll(filepath.Join(t.cfg.Dir, d), 0o755); err != nil {
			return fmt.Errorf("%w: run directory: %w", ErrConfig, err)
		}
	}
	if err := t.buildAdapters(); err != nil {
		return err
	}
	target := t.cfg.Broker.Addr
	if target != "" {
		if err := reachable(target); err != nil {
			return err
		}
	}
	if target == "" {
		port, err := FreePort()
		if err != nil {
			return err
		}
		t.brk = &brokerProc{t: t, port: port, dir: filepath.Join(t.cfg.Dir, "data/broker"), log: t.openLog("broker")}
		if err := t.brk.start(); err != nil {
			return err
		}
		target = t.brk.addr()
	}
	p, err := StartProxy(ProxyOptions{Target: target, Recorder: t.rec, RecordBroker: true,
		Observe: t.external, HadState: t.hadState, onReceive: t.noteReceived})
	if err != nil {
		return err
	}
	t.proxy = p
	if err := t.startSubscribers(); err != nil {
		return err
	}
	return t.startPublishers()
}

// buildAdapters runs each adapter's build.sh once (logs/build-NAME.log).
func (t *tester) buildAdapters() error {
	done := map[string]bool{}
	for _, a := range []*Adapter{t.cfg.SubscriberAdapter, t.cfg.PublisherAdapter} {
		if a == nil || done[a.Dir] {
			continue
		}
		done[a.Dir] = true
		t.logf("building adapter %s", a.Name)
		log := t.openLog("build-" + a.Name)
		err := a.Build(context.Background(), log)
		if log != nil {
			log.Close()
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// external reports whether id is an external program's client id.
func (t *tester) external(id string) bool {
	isSub := strings.HasPrefix(id, "s") && (t.cfg.Subscriber != "" || t.cfg.SubscriberAdapter != nil)
	isPub := strings.HasPrefix(id, "p") && (t.cfg.Publisher != "" || t.cfg.PublisherAdapter != nil)
	return isSub || isPub
}

// hadState: an external program that asks to resume a session it opened
// persistently before in this run is taken to hold it (its state lives
// where the tester cannot see; docs/live.md).
func (t *tester) hadState(id string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	had := t.persist[id]
	t.persist[id] = true
	return had
}

// noteReceived keeps an external client's last received PUBLISH of each
// message, for the Delivered event its stdout line makes.
func (t *tester) noteReceived(node string, p model.Packet) {
	if p.Type != model.PUBLISH || p.Msg == "" {
		return
	}
	t.mu.Lock()
	t.lastPub[node+"\x00"+p.Msg] = p
	t.mu.Unlock()
}

// linesDelivered records a Delivered event for each of this run's message
// ids in a subscriber's stdout line.
func (t *tester) linesDelivered(node, line string) {
	for _, msg := range t.idRE.FindAllString(line, -1) {
		t.delivered(node, msg)
	}
}

// delivered records node's Delivered event of msg, with the QoS, DUP and
// RETAIN flags of the last PUBLISH of msg the proxy forwarded to it (the
// model reads a retained copy by the event's Retain).
func (t *tester) delivered(node, msg string) {
	t.mu.Lock()
	p, ok := t.lastPub[node+"\x00"+msg]
	t.mu.Unlock()
	if !ok {
		p = model.Packet{Type: model.PUBLISH, QoS: t.cfg.QoS, Topic: t.cfg.Topic, Msg: msg, Payload: msg}
	}
	t.rec.Add(model.Event{Kind: model.Delivered, Time: time.Now().UnixNano(), Node: node, Msg: msg, Topic: p.Topic, QoS: p.QoS, Retain: p.Retain, Packet: p})
}

// vars are a client template's values.
func (t *tester) vars(id, dir, msg string) map[string]string {
	v := map[string]string{"port": strconv.Itoa(t.proxy.Port()), "id": id, "topic": t.cfg.Topic,
		"qos": strconv.Itoa(int(t.cfg.QoS)), "dir": dir}
	if msg != "" {
		v["msg"] = msg
	}
	return v
}

// openLog opens logs/name.log for appending.
func (t *tester) openLog(name string) *os.File {
	f, err := os.OpenFile(filepath.Join(t.cfg.Dir, "logs", name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil
	}
	return f
}

func (t *tester) clientDir(id string) string {
	d := filepath.Join(t.cfg.Dir, "data/clients", id)
	_ = os.MkdirAll(d, 0o755)
	return d
}

// startSubscribers starts every subscriber and waits (bounded) until each
// is subscribed, so every message of the run has its subscribers.
func (t *tester) startSubscribers() error {
	for i := 1; i <= t.cfg.Subscribers; i++ {
		id := "s" + strconv.Itoa(i)
		var c client
		var err error
		switch {
		case t.cfg.SubscriberAdapter != nil:
			a := &adapterClient{t: t, name: id, sub: true, ad: *t.cfg.SubscriberAdapter, dir: t.clientDir(id), log: t.openLog(id)}
			c, err = a, a.start()
		case t.cfg.Subscriber == "":
			o := &ourClient{t: t, name: id, sub: true, storeAt: t.clientDir(id)}
			c, err = o, o.start()
		default:
			e := &extSub{t: t, name: id, dir: t.clientDir(id), log: t.openLog(id)}
			c, err = e, e.start()
		}
		if err != nil {
			return err
		}
		t.subs = append(t.subs, c)
	}
	for _, c := range t.subs {
		if err := t.waitSubscribed(c); err != nil {
			return err
		}
	}
	return nil
}

// subjectProcess is an external client's current process (nil: none).
func subjectProcess(c client) *Process {
	switch e := c.(type) {
	case *extSub:
		return e.current()
	case *adapterClient:
		return e.latest()
	}
	return nil
}

// startPublishers starts the publishers; adapters are waited for (bounded)
// until connected, so no message waits on a process's start-up.
func (t *tester) startPublishers() error {
	for i := 1; i <= t.cfg.Publishers; i++ {
		id := "p" + strconv.Itoa(i)
		if t.cfg.PublisherAdapter != nil {
			a := &adapterClient{t: t, name: id, ad: *t.cfg.PublisherAdapter, dir: t.clientDir(id), log: t.openLog(id)}
			if err := a.start(); err != nil {
				return err
			}
			t.pubs = append(t.pubs, a)
			continue
		}
		if t.cfg.Publisher == "" {
			o := &ourClient{t: t, name: id, storeAt: t.clientDir(id)}
			if err := o.start(); err != nil {
				return err
			}
			t.pubs = append(t.pubs, o)
			continue
		}
		t.pubs = append(t.pubs, &extPub{t: t, name: id, dir: t.clientDir(id), log: t.openLog(id)})
	}
	if t.cfg.PublisherAdapter == nil {
		return nil
	}
	for _, c := range t.pubs {
		ctx, cancel := context.WithTimeout(context.Background(), t.cfg.StartTimeout)
		_, err := t.rec.Wait(ctx, 0, func(e model.Event) bool { return e.Kind == model.Connected && e.Node == c.id() })
		cancel()
		if err != nil {
			msg := ""
			if p := subjectProcess(c); p != nil {
				msg = "; its stderr:\n" + p.Stderr()
			}
			return fmt.Errorf("%w: publisher %s not connected within %v%s", ErrNotStarted, c.id(), t.cfg.StartTimeout, msg)
		}
	}
	return nil
}

// clientIDs returns every client id, subscribers first.
func (t *tester) clientIDs() (all, pausable []string) {
	for _, c := range append(append([]client(nil), t.subs...), t.pubs...) {
		all = append(all, c.id())
		if t.external(c.id()) {
			pausable = append(pausable, c.id())
		}
	}
	return all, pausable
}

// teardown ends every subject; it is safe to call twice.
func (t *tester) teardown() {
	for _, c := range append(append([]client(nil), t.pubs...), t.subs...) {
		c.close()
	}
	t.pubs, t.subs = nil, nil
	if t.proxy != nil {
		t.proxy.Close()
		t.proxy = nil
	}
	if t.brk != nil {
		t.brk.stop()
	}
	if err := t.sv.KillAll(); err != nil {
		t.logf("%v", err)
	}
}

func (t *tester) logf(format string, args ...any) {
	fmt.Fprintf(t.cfg.Log, "live: "+format+"\n", args...)
}
