package mosquittotest_test

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mqttlab/mqttlab/internal/mosquittotest"
)

// TestStartStop starts a broker, checks that its port accepts connections and
// that it logged its start, then stops it and checks the port is closed.
func TestStartStop(t *testing.T) {
	b := mosquittotest.Start(t, mosquittotest.Options{MaxInflight: 5, MaxQueued: 50})
	if !b.Running() {
		t.Fatal("broker not running after Start")
	}
	c, err := net.DialTimeout("tcp", b.Addr, 2*time.Second)
	if err != nil {
		t.Fatalf("dial %s: %v", b.Addr, err)
	}
	c.Close()
	conf, err := os.ReadFile(b.ConfPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"listener ", "allow_anonymous true", "persistence false", "max_inflight_messages 5", "max_queued_messages 50"} {
		if !strings.Contains(string(conf), want) {
			t.Errorf("config lacks %q:\n%s", want, conf)
		}
	}
	if err := b.Stop(); err != nil {
		t.Fatalf("stop: %v", err)
	}
	if b.Running() {
		t.Fatal("broker running after Stop")
	}
	if !strings.Contains(b.Log(), "terminating") {
		t.Errorf("log lacks the terminating line:\n%s", b.Log())
	}
	if c, err := net.DialTimeout("tcp", b.Addr, time.Second); err == nil {
		c.Close()
		t.Fatalf("port %s still accepts connections after Stop", b.Addr)
	}
}

// TestPubSub round-trips messages through the broker with the client tools.
func TestPubSub(t *testing.T) {
	b := mosquittotest.Start(t, mosquittotest.Options{})
	sub := mosquittotest.StartSub(t, b.Addr, "-t", "a/#", "-q", "1", "-v")
	mosquittotest.Pub(t, b.Addr, "-t", "a/b", "-q", "1", "-m", "hello")
	mosquittotest.Pub(t, b.Addr, "-t", "x/y", "-m", "other")
	mosquittotest.Pub(t, b.Addr, "-t", "a/c", "-q", "2", "-m", "world")
	got, err := sub.WaitMessages(2, 5*time.Second)
	if err != nil {
		t.Fatalf("wait messages: %v (got %q)", err, got)
	}
	if want := []string{"a/b hello", "a/c world"}; !slices.Equal(got, want) {
		t.Fatalf("messages %q, want %q", got, want)
	}
}

// TestPersistenceRestart checks that a persistent session and its queued
// message survive a broker restart with persistence on.
func TestPersistenceRestart(t *testing.T) {
	b := mosquittotest.Start(t, mosquittotest.Options{Persistence: true})
	mosquittotest.Sub(t, b.Addr, "-c", "-i", "keeper", "-q", "1", "-t", "p/t", "-E")
	mosquittotest.Pub(t, b.Addr, "-t", "p/t", "-q", "1", "-m", "kept")
	b.Restart(t)
	if _, err := os.Stat(filepath.Join(filepath.Dir(b.ConfPath), "data", "mosquitto.db")); err != nil {
		t.Fatalf("no persistence file after restart: %v", err)
	}
	got := mosquittotest.Sub(t, b.Addr, "-c", "-i", "keeper", "-q", "1", "-t", "p/t", "-C", "1", "-W", "5")
	if !slices.Equal(got, []string{"kept"}) {
		t.Fatalf("after restart got %q, want [kept]", got)
	}
}

// TestRunTimeout checks that a tool that outlives its timeout is stopped
// and reported as a timeout.
func TestRunTimeout(t *testing.T) {
	b := mosquittotest.Start(t, mosquittotest.Options{})
	_, err := mosquittotest.Run("mosquitto_sub", b.Addr, 300*time.Millisecond, "-t", "never")
	if !errors.Is(err, mosquittotest.ErrTimeout) {
		t.Fatalf("err = %v, want ErrTimeout", err)
	}
}

// TestFindMissing checks that a program that is not installed is reported
// as ErrNotInstalled.
func TestFindMissing(t *testing.T) {
	_, err := mosquittotest.Find("mosquitto_no_such_tool")
	if !errors.Is(err, mosquittotest.ErrNotInstalled) {
		t.Fatalf("err = %v, want ErrNotInstalled", err)
	}
}

// recordingTB records how Require ended the test instead of ending it.
type recordingTB struct {
	testing.TB
	calls []string
}

func (r *recordingTB) Helper() {}
func (r *recordingTB) Fatalf(format string, args ...any) {
	r.calls = append(r.calls, "fatal: "+fmt.Sprintf(format, args...))
}
func (r *recordingTB) Skipf(format string, args ...any) {
	r.calls = append(r.calls, "skip: "+fmt.Sprintf(format, args...))
}

// TestRequireMissing: a missing program fails the test under CI=true and
// skips it elsewhere, naming the install command either way; the skip also
// says to rerun with -count=1, since go test caches the skip.
func TestRequireMissing(t *testing.T) {
	for _, c := range []struct{ ci, want string }{{"true", "fatal: "}, {"", "skip: "}} {
		t.Setenv("CI", c.ci)
		r := &recordingTB{TB: t}
		mosquittotest.Require(r, "mosquitto_no_such_tool")
		if len(r.calls) == 0 || !strings.HasPrefix(r.calls[0], c.want) || !strings.Contains(r.calls[0], mosquittotest.InstallHint) {
			t.Errorf("CI=%q: calls %q, want first a %q naming %q", c.ci, r.calls, c.want, mosquittotest.InstallHint)
		}
		if c.ci == "" && (len(r.calls) == 0 || !strings.Contains(r.calls[0], "go test -count=1")) {
			t.Errorf("skip %q does not say to rerun with go test -count=1", r.calls)
		}
	}
}
