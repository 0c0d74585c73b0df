package live

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/mqttlab/mqttlab/engine"
	"github.com/mqttlab/mqttlab/engine/packet"
	"github.com/mqttlab/mqttlab/model"
)

// client is one client subject of a run: one of ours (in process) or an
// external program.
type client interface {
	id() string
	// kill crashes it (memory lost, its store kept) and records the Crash.
	kill()
	// restart brings a killed client back.
	restart() error
	// pause and resume stop and continue it (external programs only).
	pause()
	resume()
	// close ends it for good at the end of the run.
	close()
}

// ourClient is this project's engine client (live.Client), in the
// tester's process, with a file store in its own directory. A kill is a
// Crash of the driver: only the store survives, as after SIGKILL.
type ourClient struct {
	t       *tester
	name    string
	sub     bool
	storeAt string

	mu   sync.Mutex
	c    *Client
	stop chan struct{} // closed when this incarnation is killed or closed
}

func (o *ourClient) id() string { return o.name }

// start runs a new incarnation from the store and keeps it connected.
func (o *ourClient) start() error {
	st, err := OpenStore(o.storeAt)
	if err != nil {
		return err
	}
	cfg := engine.DefaultClientConfig(o.name, o.t.cfg.ClientPolicy)
	cfg.Version = o.t.cfg.Version
	if cfg.Version == packet.V311 {
		cfg.SessionExpiry = 0
	}
	c, err := RunClient(ClientOptions{Addr: o.t.proxy.Addr(), Config: cfg, Store: st, Recorder: o.t.rec})
	if err != nil {
		return err
	}
	stop := make(chan struct{})
	o.mu.Lock()
	o.c, o.stop = c, stop
	o.mu.Unlock()
	go o.keepConnected(c, stop)
	return nil
}

// keepConnected reconnects whenever the connection is down, resubscribing
// when the broker answers Session Present=0.
func (o *ourClient) keepConnected(c *Client, stop <-chan struct{}) {
	for {
		select {
		case <-stop:
			return
		default:
		}
		if !c.Connected() {
			ctx, cancel := context.WithTimeout(context.Background(), IOTimeout)
			sp, err := c.Connect(ctx, false)
			if err == nil && o.sub && !sp {
				_, err = c.Subscribe(ctx, packet.Subscription{Filter: o.t.cfg.Topic, QoS: packet.QoS(o.t.cfg.QoS)})
				if err != nil {
					c.CutConnection() // resubscribe on the next connection
				}
			}
			cancel()
		}
		select {
		case <-stop:
			return
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func (o *ourClient) current() *Client {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.c
}

func (o *ourClient) publish(msg string) {
	if c := o.current(); c != nil {
		c.PublishAsync(o.t.cfg.Topic, []byte(msg), packet.QoS(o.t.cfg.QoS), false)
	}
}

func (o *ourClient) kill() {
	o.mu.Lock()
	c, stop := o.c, o.stop
	o.c = nil
	o.mu.Unlock()
	if c == nil {
		return
	}
	close(stop)
	c.Crash()
}

func (o *ourClient) restart() error {
	if o.current() != nil {
		return nil
	}
	return o.start()
}

func (o *ourClient) pause()  {}
func (o *ourClient) resume() {}

func (o *ourClient) close() {
	o.mu.Lock()
	c, stop := o.c, o.stop
	o.c = nil
	o.mu.Unlock()
	if c != nil {
		close(stop)
		c.Close()
	}
}

// extSub is an external subscriber program: a long-running process whose
// stdout lines name the messages it delivered.
type extSub struct {
	t    *tester
	name string
	dir  string
	log  *os.File

	mu   sync.Mutex
	proc *Process
}

func (e *extSub) id() string { return e.name }

func (e *extSub) start() error {
	cmd, err := Expand(e.t.cfg.Subscriber, e.t.vars(e.name, e.dir, ""))
	if err != nil {
		return err
	}
	p, err := e.t.sv.Start(ProcOptions{Name: "subscriber " + e.name, Command: cmd, Log: e.log,
		OnLine: func(line string) { e.t.linesDelivered(e.name, line) }})
	if err != nil {
		return err
	}
	e.mu.Lock()
	e.proc = p
	e.mu.Unlock()
	return nil
}

func (e *extSub) current() *Process {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.proc
}

func (e *extSub) kill() {
	e.mu.Lock()
	p := e.proc
	e.proc = nil
	e.mu.Unlock()
	if p == nil {
		return
	}
	if err := p.Kill(); err != nil {
		e.t.logf("%v", err)
	}
	e.t.crashed(e.name, p)
}

func (e *extSub) restart() error {
	if e.current() != nil {
		return nil
	}
	return e.start()
}

func (e *extSub) pause() {
	if p := e.current(); p != nil {
		p.Pause()
	}
}

func (e *extSub) resume() {
	if p := e.current(); p != nil {
		p.Resume()
	}
}

func (e *extSub) close() {
	if p := e.current(); p != nil {
		_ = p.Kill()
	}
}

// crashed records the Crash of an external client killed with SIGKILL,
// once what the process did before dying is in the history: every stdout
// line read (its deliveries), and every byte it wrote recorded by the proxy
// (its connections seen to close). Both waits are bounded.
func (t *tester) crashed(id string, p *Process) {
	select {
	case <-p.Done():
	case <-time.After(KillWait):
	}
	t.proxy.WaitClosed(func(c string) bool { return c == id }, KillWait)
	t.rec.Add(model.Event{Kind: model.Crash, Time: time.Now().UnixNano(), Node: id, Point: model.CrashBetweenSteps})
}

// extPub is one external publisher slot: it runs the publisher template
// once per message, one process at a time, under a fixed client id. A
// process that exits 0 had its message Accepted and Acknowledged.
type extPub struct {
	t    *tester
	name string
	dir  string
	log  *os.File

	mu   sync.Mutex
	proc *Process
	down bool // killed: no new process until restart
	wg   sync.WaitGroup
}

func (e *extPub) id() string { return e.name }

// publish starts the publisher for msg unless the previous one still runs
// (the message is then skipped, and counted as such).
func (e *extPub) publish(msg string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.down || (e.proc != nil && !e.proc.Exited()) {
		return false
	}
	cmd, err := Expand(e.t.cfg.Publisher, e.t.vars(e.name, e.dir, msg))
	if err != nil {
		return false
	}
	p, err := e.t.sv.Start(ProcOptions{Name: "publisher " + e.name, Command: cmd, Log: e.log})
	if err != nil {
		e.t.logf("publisher %s: %v", e.name, err)
		return false
	}
	e.proc = p
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		<-p.Done()
		if p.ExitCode() == 0 {
			now := time.Now().UnixNano()
			e.t.rec.Add(model.Event{Kind: model.Accepted, Time: now, Node: e.name, Msg: msg, Topic: e.t.cfg.Topic, QoS: e.t.cfg.QoS})
			if e.t.cfg.QoS > 0 {
				e.t.rec.Add(model.Event{Kind: model.Acknowledged, Time: now, Node: e.name, Msg: msg})
			}
		}
	}()
	return true
}

// isDown reports whether the publisher is killed (until its restart).
func (e *extPub) isDown() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.down
}

func (e *extPub) kill() {
	e.mu.Lock()
	p := e.proc
	e.down = true
	e.mu.Unlock()
	if p == nil || p.Exited() {
		return
	}
	if err := p.Kill(); err != nil {
		e.t.logf("%v", err)
	}
	e.t.crashed(e.name, p)
}

func (e *extPub) restart() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.down = false
	return nil
}

func (e *extPub) pause() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.proc != nil {
		e.proc.Pause()
	}
}

func (e *extPub) resume() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.proc != nil {
		e.proc.Resume()
	}
}

// close waits (bounded by the liveness phase, which ran before) for the
// last publisher, then kills what is left.
func (e *extPub) close() {
	e.mu.Lock()
	p := e.proc
	e.mu.Unlock()
	if p != nil {
		_ = p.Kill()
	}
	e.wg.Wait()
}

// brokerProc is a managed broker: a command template run in its own
// process group, on a fixed port and data directory that survive its
// restarts.
type brokerProc struct {
	t    *tester
	port int
	dir  string
	log  *os.File

	mu   sync.Mutex
	proc *Process
}

func (b *brokerProc) addr() string { return "127.0.0.1:" + strconv.Itoa(b.port) }

// start writes the config (first time) and starts the broker, waiting
// (bounded) for its port.
func (b *brokerProc) start() error {
	vars := map[string]string{"port": strconv.Itoa(b.port), "dir": b.dir}
	bs := b.t.cfg.Broker
	if bs.Config != "" {
		conf, err := ExpandText(bs.Config, vars)
		if err != nil {
			return fmt.Errorf("broker config: %w", err)
		}
		if err := os.WriteFile(filepath.Join(b.dir, bs.ConfigName), []byte(conf), 0o644); err != nil {
			return err
		}
	}
	cmd, err := Expand(bs.Command, vars)
	if err != nil {
		return err
	}
	p, err := b.t.sv.Start(ProcOptions{Name: "broker", Command: cmd, Env: bs.Env, Log: b.log, OnLine: b.logLine, OnErrLine: b.logLine})
	if err != nil {
		return err
	}
	b.mu.Lock()
	b.proc = p
	b.mu.Unlock()
	if err := p.WaitPort(b.addr(), b.t.cfg.StartTimeout); err != nil {
		_ = p.Kill()
		return err
	}
	return nil
}

// logLine records a drop line of the broker's output (DropLineFormat)
// as a Dropped event.
func (b *brokerProc) logLine(line string) {
	if e, ok := ParseDropLine(line); ok {
		e.Time = time.Now().UnixNano()
		b.t.rec.Add(e)
	}
}

func (b *brokerProc) current() *Process {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.proc
}

func (b *brokerProc) kill() {
	p := b.current()
	if p == nil {
		return
	}
	// Down first: once the Crash is recorded, nothing may be recorded as
	// received by the dying process.
	b.t.proxy.SetBrokerDown(true)
	b.t.rec.Add(model.Event{Kind: model.Crash, Time: time.Now().UnixNano(), Node: model.BrokerNode, Point: model.CrashBetweenSteps})
	if err := p.Kill(); err != nil {
		b.t.logf("%v", err)
	}
	b.t.proxy.Cut(nil) // the kernel resets the broker's sockets; the proxy's client legs follow
}

// restart starts the broker again. Restart is recorded before the start:
// the new process may accept a connection (and the proxy record its
// packets) before WaitPort sees it listening.
func (b *brokerProc) restart() {
	b.t.rec.Add(model.Event{Kind: model.Restart, Time: time.Now().UnixNano(), Node: model.BrokerNode})
	b.t.proxy.SetBrokerDown(false)
	if err := b.start(); err != nil {
		b.t.rec.Add(model.Event{Kind: model.Failed, Time: time.Now().UnixNano(), Node: model.BrokerNode, Reason: "restart: " + err.Error()})
		b.t.logf("broker restart failed: %v", err)
	}
}

// stop ends the broker at the end of the run: SIGTERM, then SIGKILL.
func (b *brokerProc) stop() {
	if p := b.current(); p != nil {
		_ = p.Terminate(KillWait)
	}
}
