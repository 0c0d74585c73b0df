package live

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/mqttlab/mqttlab/model"
)

// This file is the tester's side of the long-running subject protocol
// (docs/live.md): a client subject is one process for its whole life; the
// tester writes commands to its stdin and reads events from its stdout,
// one JSON object a line.

// Adapter is a program that speaks the long-running subject protocol: a
// folder holding run.sh (the program; the tester runs `sh run.sh`) and,
// optionally, build.sh (which builds or installs it; the tester runs it
// once before a run). The adapters of live/adapters/NAME are chosen by
// name.
type Adapter struct {
	// Name names it in reports and logs.
	Name string
	// Dir is the folder of run.sh and build.sh.
	Dir string
}

// ErrNoAdapter reports a name that is no adapter.
var ErrNoAdapter = errors.New("live: no such adapter")

// AdapterBuildTimeout bounds an adapter's build.sh.
const AdapterBuildTimeout = 5 * time.Minute

// FindAdapter resolves name: a folder of root (live/adapters) holding
// run.sh, or a path to such a folder.
func FindAdapter(root, name string) (Adapter, error) {
	dir := name
	if !strings.ContainsRune(name, '/') {
		dir = filepath.Join(root, name)
	}
	if _, err := os.Stat(filepath.Join(dir, "run.sh")); err != nil {
		known, _ := AdapterNames(root)
		return Adapter{}, fmt.Errorf("%w: %q (no %s; adapters in %s: %s)", ErrNoAdapter, name, filepath.Join(dir, "run.sh"), root, strings.Join(known, ", "))
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return Adapter{}, err
	}
	return Adapter{Name: filepath.Base(abs), Dir: abs}, nil
}

// AdapterNames lists the adapters in root, sorted.
func AdapterNames(root string) ([]string, error) {
	ents, err := os.ReadDir(root)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		if _, err := os.Stat(filepath.Join(root, e.Name(), "run.sh")); e.IsDir() && err == nil {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

// Build runs the adapter's build.sh, if it has one, in its folder (output
// to log); a failure is an error wrapping ErrNotStarted that quotes it.
func (a Adapter) Build(ctx context.Context, log io.Writer) error {
	script := filepath.Join(a.Dir, "build.sh")
	if _, err := os.Stat(script); err != nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, AdapterBuildTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/sh", script)
	cmd.Dir = a.Dir
	var tail tailBuffer
	w := io.Writer(&tail)
	if log != nil {
		w = io.MultiWriter(log, &tail)
	}
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%w: adapter %s: %s failed (%v):\n%s", ErrNotStarted, a.Name, script, err, tail.String())
	}
	return nil
}

// command is the shell command line that runs the adapter.
func (a Adapter) command() string {
	return "exec /bin/sh " + shellQuote(filepath.Join(a.Dir, "run.sh"))
}

// KeepAlive is the keep-alive, in seconds, the tester asks adapters for.
const KeepAlive = 10

// protoCommand is a command line of the protocol.
type protoCommand struct {
	Cmd       string `json:"cmd"`
	Role      string `json:"role,omitempty"`
	ID        string `json:"id,omitempty"`
	Host      string `json:"host,omitempty"`
	Port      int    `json:"port,omitempty"`
	Clean     *bool  `json:"clean,omitempty"`
	KeepAlive int    `json:"keepalive,omitempty"`
	Dir       string `json:"dir,omitempty"`
	Topic     string `json:"topic,omitempty"`
	QoS       *uint8 `json:"qos,omitempty"`
	Msg       string `json:"msg,omitempty"`
}

// protoEvent is an event line of the protocol.
type protoEvent struct {
	Event string `json:"event"`
	Msg   string `json:"msg"`
	Error string `json:"error"`
}

// adapterClient is a client subject run by an adapter: one process per
// incarnation, fed commands through a queue so that the workload never
// waits on a slow or paused process.
type adapterClient struct {
	t    *tester
	name string
	sub  bool
	ad   Adapter
	dir  string
	log  *os.File

	mu   sync.Mutex
	proc *Process
	last *Process    // the latest incarnation, even once down (for diagnostics)
	in   chan []byte // this incarnation's command queue; nil while down
}

// commandQueue bounds the commands waiting for a process (a paused one
// reads none): at -rate 1000 it holds 8 s of messages.
const commandQueue = 8192

func (a *adapterClient) id() string { return a.name }

// start runs a new incarnation and sends it connect (and subscribe).
func (a *adapterClient) start() error {
	p, err := a.t.sv.Start(ProcOptions{Name: a.ad.Name + " " + a.name, Command: a.ad.command(), Log: a.log, Stdin: true,
		OnLine: func(line string) { a.t.adapterEvent(a.name, line) }})
	if err != nil {
		return err
	}
	in := make(chan []byte, commandQueue)
	go feed(p, in)
	a.mu.Lock()
	a.proc, a.last, a.in = p, p, in
	a.mu.Unlock()
	go a.watch(p)
	clean, qos, role := false, a.t.cfg.QoS, "publisher"
	if a.sub {
		role = "subscriber"
	}
	a.send(protoCommand{Cmd: "connect", Role: role, ID: a.name, Host: "127.0.0.1", Port: a.t.proxy.Port(), Clean: &clean,
		KeepAlive: KeepAlive, Dir: a.dir, Topic: a.t.cfg.Topic, QoS: &qos})
	if a.sub {
		a.send(protoCommand{Cmd: "subscribe", Topic: a.t.cfg.Topic, QoS: &qos})
	}
	return nil
}

// feed writes queued commands to p's stdin until the queue closes or p
// stops reading.
func feed(p *Process, in <-chan []byte) {
	w := p.Stdin()
	defer w.Close()
	for line := range in {
		if _, err := w.Write(line); err != nil {
			for range in { // drain: the process is gone
			}
			return
		}
	}
}

// watch notices an incarnation that ended by itself (not killed by a
// fault): it records its Crash and leaves the client down until the heal.
func (a *adapterClient) watch(p *Process) {
	<-p.Done()
	a.mu.Lock()
	mine := a.proc == p
	a.mu.Unlock()
	if !mine || a.stopped() != p {
		return
	}
	a.t.logf("%s (%s) exited by itself (status %d); its stderr:\n%s", a.name, a.ad.Name, p.ExitCode(), p.Stderr())
	a.t.crashed(a.name, p)
}

// send queues a command; it reports false when the client is down or its
// queue is full.
func (a *adapterClient) send(c protoCommand) bool {
	line, err := json.Marshal(c)
	if err != nil {
		return false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.in == nil {
		return false
	}
	select {
	case a.in <- append(line, '\n'):
		return true
	default:
		return false
	}
}

// publish asks the adapter to publish msg (false: skipped, the client is
// down or its queue full).
func (a *adapterClient) publish(msg string) bool {
	qos := a.t.cfg.QoS
	return a.send(protoCommand{Cmd: "publish", Msg: msg, Topic: a.t.cfg.Topic, QoS: &qos})
}

// stopped takes the current incarnation down and returns it.
func (a *adapterClient) stopped() *Process {
	a.mu.Lock()
	defer a.mu.Unlock()
	p := a.proc
	if a.in != nil {
		close(a.in)
	}
	a.proc, a.in = nil, nil
	return p
}

func (a *adapterClient) kill() {
	p := a.stopped()
	if p == nil {
		return
	}
	if err := p.Kill(); err != nil {
		a.t.logf("%v", err)
	}
	a.t.crashed(a.name, p)
}

// restart starts a new incarnation with the same id and dir.
func (a *adapterClient) restart() error {
	if a.current() != nil {
		return nil
	}
	return a.start()
}

func (a *adapterClient) current() *Process {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.proc
}

// latest is the latest incarnation, running or not (nil before the first).
func (a *adapterClient) latest() *Process {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.last
}

func (a *adapterClient) pause() {
	if p := a.current(); p != nil {
		p.Pause()
	}
}

func (a *adapterClient) resume() {
	if p := a.current(); p != nil {
		p.Resume()
	}
}

// close ends it for good (the history is already taken).
func (a *adapterClient) close() {
	if p := a.stopped(); p != nil {
		_ = p.Kill()
	}
}

// adapterEvent records what an adapter's event line means: delivered is
// a Delivered event; accepted (the library took the message) is Accepted;
// published (the library reports the publish complete) is Acknowledged,
// and Accepted too if no accepted came first. Other events (connected,
// subscribed, connection_lost, error) are for the log: the proxy records
// the connections and SUBACKs themselves. Lines that are not JSON objects
// are the library's own output, kept in the log only.
func (t *tester) adapterEvent(node, line string) {
	var ev protoEvent
	if !strings.HasPrefix(strings.TrimSpace(line), "{") || json.Unmarshal([]byte(line), &ev) != nil {
		return
	}
	if ev.Msg != "" && !t.idRE.MatchString(ev.Msg) {
		return // not a message of this run
	}
	switch ev.Event {
	case "delivered":
		if ev.Msg != "" {
			t.delivered(node, ev.Msg)
		}
	case "accepted":
		if ev.Msg != "" {
			t.accepted(node, ev.Msg)
		}
	case "published":
		if ev.Msg == "" {
			return
		}
		t.accepted(node, ev.Msg)
		if t.cfg.QoS > 0 {
			t.rec.Add(model.Event{Kind: model.Acknowledged, Time: time.Now().UnixNano(), Node: node, Msg: ev.Msg})
		}
	case "error":
		t.mu.Lock()
		t.adapterErrors++
		t.mu.Unlock()
	}
}

// accepted records msg's Accepted once.
func (t *tester) accepted(node, msg string) {
	t.mu.Lock()
	seen := t.acceptedMsgs[msg]
	t.acceptedMsgs[msg] = true
	t.mu.Unlock()
	if !seen {
		t.rec.Add(model.Event{Kind: model.Accepted, Time: time.Now().UnixNano(), Node: node, Msg: msg, Topic: t.cfg.Topic, QoS: t.cfg.QoS})
	}
}
