package main

import (
	"bufio"
	"context"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mqttlab/mqttlab/engine"
	"github.com/mqttlab/mqttlab/engine/packet"
	"github.com/mqttlab/mqttlab/live"
	"github.com/mqttlab/mqttlab/model"
)

// brokerChild is a "simrun broker" child process of the test.
type brokerChild struct {
	cmd    *exec.Cmd
	addr   string
	lines  chan string // its stderr lines after the first
	waited chan struct{}
}

// startBrokerChild starts simrun broker on listen with data dir (and extra
// flags) and waits for its "listening on" line.
func startBrokerChild(t *testing.T, listen, dir string, extra ...string) *brokerChild {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, append([]string{"broker", "-listen", listen, "-data", dir}, extra...)...)
	cmd.Env = append(os.Environ(), childEnv+"=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	b := &brokerChild{cmd: cmd, lines: make(chan string, 1024), waited: make(chan struct{})}
	t.Cleanup(func() { b.kill() })
	first := make(chan string, 1)
	go b.read(stderr, first)
	select {
	case l := <-first:
		const mark = "listening on "
		i := strings.Index(l, mark)
		if i < 0 {
			t.Fatalf("first stderr line %q has no %q", l, mark)
		}
		b.addr = strings.Fields(l[i+len(mark):])[0]
	case <-time.After(20 * time.Second):
		t.Fatal("simrun broker did not report its address within 20 s")
	}
	return b
}

func (b *brokerChild) read(r io.Reader, first chan<- string) {
	sc := bufio.NewScanner(r)
	n := 0
	for sc.Scan() {
		if n == 0 {
			first <- sc.Text()
		} else {
			select {
			case b.lines <- sc.Text():
			default:
			}
		}
		n++
	}
	close(b.lines)
}

// kill sends SIGKILL to the broker's process group and waits for it.
func (b *brokerChild) kill() {
	if b.cmd.ProcessState != nil {
		return
	}
	_ = syscall.Kill(-b.cmd.Process.Pid, syscall.SIGKILL)
	_ = b.cmd.Wait()
}

// TestBrokerCommandSurvivesKill starts simrun broker as a child process,
// leaves a message queued for an offline persistent subscriber, kills the
// broker with SIGKILL, restarts it from the same data directory, and checks
// that the subscriber's session (Session Present) and the queued message
// survived; the broker logged a line per connection event; SIGTERM stops it
// with status 0.
func TestBrokerCommandSurvivesKill(t *testing.T) {
	dir := t.TempDir()
	b := startBrokerChild(t, "127.0.0.1:0", dir)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rec := live.NewRecorder()
	fixed, _ := engine.PresetByName("fixed")
	client := func(id string) *live.Client {
		c, err := live.RunClient(live.ClientOptions{Addr: b.addr, Config: engine.DefaultClientConfig(id, fixed.Client), Recorder: rec})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.Close)
		return c
	}
	sub := client("sub")
	if _, err := sub.Connect(ctx, false); err != nil {
		t.Fatal(err)
	}
	if _, err := sub.Subscribe(ctx, packet.Subscription{Filter: "k/#", QoS: 2}); err != nil {
		t.Fatal(err)
	}
	if err := sub.Disconnect(ctx); err != nil {
		t.Fatal(err)
	}
	pub := client("pub")
	if _, err := pub.Connect(ctx, true); err != nil {
		t.Fatal(err)
	}
	if err := pub.Publish(ctx, "k/1", []byte("queued-1"), 1, false); err != nil {
		t.Fatal(err)
	}
	b.kill()
	logged := drain(b.lines)
	for _, want := range []string{`CONNECT client id "sub"`, `CONNECT client id "pub"`, "closed"} {
		if !strings.Contains(logged, want) {
			t.Errorf("broker stderr lacks %q:\n%s", want, logged)
		}
	}

	b2 := startBrokerChild(t, b.addr, dir) // same port, same data
	sp, err := sub.Connect(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	if !sp {
		t.Fatal("Session Present=0 after the restart: the session did not survive SIGKILL")
	}
	if _, err := rec.Wait(ctx, 0, func(e model.Event) bool { return e.Kind == model.Delivered && e.Msg == "queued-1" }); err != nil {
		t.Fatalf("queued message not delivered after the restart: %v", err)
	}
	if err := b2.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := b2.cmd.Wait(); err != nil {
		t.Fatalf("simrun broker after SIGTERM: %v (want exit 0)", err)
	}
}

// drain returns the lines buffered in ch once it is closed (the process's
// stderr ended).
func drain(ch <-chan string) string {
	var b strings.Builder
	for l := range ch {
		b.WriteString(l + "\n")
	}
	return b.String()
}

// TestBrokerCommandUsage: missing -data and a bad preset are usage errors.
func TestBrokerCommandUsage(t *testing.T) {
	r := simrun(t, "broker").want(t, exitUsage)
	if !strings.Contains(r.stderr, "-data") {
		t.Errorf("stderr %q does not name -data", r.stderr)
	}
	r = simrun(t, "broker", "-data", t.TempDir(), "-preset", "nope").want(t, exitUsage)
	if !strings.Contains(r.stderr, "preset") {
		t.Errorf("stderr %q does not name the preset", r.stderr)
	}
}

// TestDropLine: every drop the broker reports is one log line naming the
// client, the reason and, for a full queue, its bound and policy.
func TestDropLine(t *testing.T) {
	for _, c := range []struct {
		d    engine.Drop
		want string
	}{
		{engine.Drop{Client: "s1", Topic: "mqttlab/live", Payload: []byte("lt00002a-7"), Reason: engine.DropQueueFull, Bound: 1000, Policy: engine.DropOldest},
			`dropped client=s1 reason=queue-full bound=1000 policy=drop-oldest topic="mqttlab/live" msg="lt00002a-7"`},
		{engine.Drop{Client: "s2", Topic: "t", Payload: []byte("x"), Reason: engine.DropExpired},
			`dropped client=s2 reason=expired topic="t" msg="x"`},
	} {
		if got := dropLine(c.d); got != c.want {
			t.Errorf("dropLine = %s, want %s", got, c.want)
		}
	}
}
