package mosquittotest

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// ToolTimeout bounds one run of mosquitto_pub or mosquitto_sub started by Pub
// or Sub.
const ToolTimeout = 10 * time.Second

// ErrTimeout reports that a client tool or a wait ran past its deadline.
var ErrTimeout = errors.New("timed out")

// hostPort splits addr for the tools' -h and -p flags.
func hostPort(addr string) []string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return []string{"-h", addr}
	}
	return []string{"-h", host, "-p", port}
}

// Run runs tool (mosquitto_pub or mosquitto_sub) against addr with args and
// returns its standard output. It fails with ErrTimeout if the tool runs
// longer than timeout; a non-zero exit is an error carrying its stderr.
func Run(tool, addr string, timeout time.Duration, args ...string) (string, error) {
	bin, err := Find(tool)
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append(hostPort(addr), args...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	if ctx.Err() != nil {
		return out.String(), fmt.Errorf("%s %s: %w after %v (stderr: %s)", tool, strings.Join(args, " "), ErrTimeout, timeout, errb.String())
	}
	if err != nil {
		return out.String(), fmt.Errorf("%s %s: %w (stderr: %s)", tool, strings.Join(args, " "), err, errb.String())
	}
	return out.String(), nil
}

// Pub runs mosquitto_pub against addr with args and fails the test if it does
// not succeed within ToolTimeout.
func Pub(t testing.TB, addr string, args ...string) {
	t.Helper()
	Require(t, "mosquitto_pub")
	if _, err := Run("mosquitto_pub", addr, ToolTimeout, args...); err != nil {
		t.Fatalf("mosquittotest: %v", err)
	}
}

// Sub runs mosquitto_sub against addr with args until it exits (give it -C
// count, -W seconds or -E) and returns its output lines; it fails the test if
// the tool fails or runs past ToolTimeout.
func Sub(t testing.TB, addr string, args ...string) []string {
	t.Helper()
	Require(t, "mosquitto_sub")
	out, err := Run("mosquitto_sub", addr, ToolTimeout, args...)
	if err != nil {
		t.Fatalf("mosquittotest: %v", err)
	}
	return splitLines(out)
}

func splitLines(s string) []string {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// Subscriber is a mosquitto_sub running in the background. It runs with -d
// so that it is known when its SUBACK arrived; Messages returns the output
// lines that are not debug lines.
type Subscriber struct {
	cmd    *exec.Cmd
	cancel context.CancelFunc
	mu     sync.Mutex
	lines  []string
	stderr bytes.Buffer
	more   chan struct{} // closed and replaced when a line arrives or the process ends
	ended  bool
	err    error
}

// StartSub starts mosquitto_sub -d against addr with args in the background,
// waits until the broker acknowledged its subscriptions, and stops it at
// t.Cleanup. The process is killed after ToolTimeout at the latest.
func StartSub(t testing.TB, addr string, args ...string) *Subscriber {
	t.Helper()
	bin := Require(t, "mosquitto_sub")
	ctx, cancel := context.WithTimeout(context.Background(), ToolTimeout)
	s := &Subscriber{cancel: cancel, more: make(chan struct{})}
	argv := append(append(hostPort(addr), "-d"), args...)
	if sb, err := exec.LookPath("stdbuf"); err == nil {
		// mosquitto_sub block-buffers its debug lines on a pipe: ask for line buffering.
		argv, bin = append([]string{"-oL", bin}, argv...), sb
	}
	s.cmd = exec.CommandContext(ctx, bin, argv...)
	s.cmd.Stderr = &lockedWriter{mu: &s.mu, w: &s.stderr}
	out, err := s.cmd.StdoutPipe()
	if err != nil {
		cancel()
		t.Fatalf("mosquittotest: %v", err)
	}
	if err := s.cmd.Start(); err != nil {
		cancel()
		t.Fatalf("mosquittotest: start mosquitto_sub: %v", err)
	}
	go s.read(out)
	t.Cleanup(s.Stop)
	if err := s.waitLines(func(ls []string) bool { return anyContains(ls, "received SUBACK") }, ToolTimeout); err != nil {
		t.Fatalf("mosquittotest: mosquitto_sub %s: no SUBACK: %v (stderr: %s)", strings.Join(args, " "), err, s.Stderr())
	}
	return s
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (s *Subscriber) read(r interface{ Read([]byte) (int, error) }) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		s.mu.Lock()
		s.lines = append(s.lines, sc.Text())
		close(s.more)
		s.more = make(chan struct{})
		s.mu.Unlock()
	}
	err := s.cmd.Wait()
	s.mu.Lock()
	s.ended, s.err = true, err
	close(s.more)
	s.more = make(chan struct{})
	s.mu.Unlock()
}

func anyContains(lines []string, sub string) bool {
	for _, l := range lines {
		if strings.Contains(l, sub) {
			return true
		}
	}
	return false
}

// waitLines waits until the output lines so far satisfy ok.
func (s *Subscriber) waitLines(ok func([]string) bool, timeout time.Duration) error {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		if ok(s.lines) {
			s.mu.Unlock()
			return nil
		}
		ended, err, more := s.ended, s.err, s.more
		s.mu.Unlock()
		if ended {
			return fmt.Errorf("mosquitto_sub exited: %v", err)
		}
		select {
		case <-more:
		case <-deadline.C:
			return ErrTimeout
		}
	}
}

// isDebug reports whether a line is one of mosquitto_sub -d's debug lines.
func isDebug(l string) bool {
	return strings.HasPrefix(l, "Client ") || strings.HasPrefix(l, "Subscribed (mid:")
}

// Messages returns the output lines so far that are not debug lines: the
// payloads (or "topic payload" with -v).
func (s *Subscriber) Messages() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return messages(s.lines)
}

func messages(lines []string) []string {
	var msgs []string
	for _, l := range lines {
		if !isDebug(l) {
			msgs = append(msgs, l)
		}
	}
	return msgs
}

// WaitMessages waits until at least n messages arrived and returns them, or
// returns what arrived with ErrTimeout.
func (s *Subscriber) WaitMessages(n int, timeout time.Duration) ([]string, error) {
	err := s.waitLines(func(ls []string) bool { return len(messages(ls)) >= n }, timeout)
	return s.Messages(), err
}

// WaitFor waits until a message line equals line and returns the messages
// so far, or returns what arrived with ErrTimeout.
func (s *Subscriber) WaitFor(line string, timeout time.Duration) ([]string, error) {
	err := s.waitLines(func(ls []string) bool { return slices.Contains(messages(ls), line) }, timeout)
	return s.Messages(), err
}

// Stderr returns what the tool wrote to standard error.
func (s *Subscriber) Stderr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stderr.String()
}

// Stop kills the subscriber (if still running) and waits for it.
func (s *Subscriber) Stop() {
	s.cancel()
	s.mu.Lock()
	more, ended := s.more, s.ended
	s.mu.Unlock()
	for !ended {
		<-more
		s.mu.Lock()
		more, ended = s.more, s.ended
		s.mu.Unlock()
	}
}
