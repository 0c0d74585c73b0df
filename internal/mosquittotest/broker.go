package mosquittotest

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// StartTimeout bounds how long Start waits for the broker's port to accept
// connections, and StopTimeout how long Stop waits after SIGTERM before it
// kills the process.
const (
	StartTimeout = 10 * time.Second
	StopTimeout  = 5 * time.Second
)

// Options configures the broker. The zero value is a broker with persistence
// off and mosquitto's default limits.
type Options struct {
	// Persistence turns mosquitto's persistence on, saving into PersistDir
	// (a directory in the test's temp dir when empty). A broker restarted
	// with Restart then reloads its sessions and queued messages.
	Persistence bool
	PersistDir  string
	// MaxInflight is max_inflight_messages (0: mosquitto's default, 20).
	MaxInflight int
	// MaxQueued is max_queued_messages (0: mosquitto's default, 1000).
	MaxQueued int
	// Extra lines appended to the config file verbatim.
	Extra []string
}

// Broker is a running mosquitto.
type Broker struct {
	// Addr is "127.0.0.1:port", the address clients dial.
	Addr string
	// Host and Port are Addr's parts, as mosquitto_pub -h/-p want them.
	Host string
	Port int
	// ConfPath and LogPath are the config file and the broker's log file.
	ConfPath string
	LogPath  string

	bin  string
	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
	err  error // Wait's result, valid once done is closed
}

// Start starts mosquitto with opts and registers its stop at t.Cleanup.
func Start(t testing.TB, opts Options) *Broker {
	t.Helper()
	bin := Require(t, "mosquitto")
	if err := opts.validate(); err != nil {
		t.Fatalf("mosquittotest: %v", err)
	}
	dir := t.TempDir()
	if opts.Persistence && opts.PersistDir == "" {
		opts.PersistDir = filepath.Join(dir, "data")
	}
	if opts.PersistDir != "" {
		if err := os.MkdirAll(opts.PersistDir, 0o755); err != nil {
			t.Fatalf("mosquittotest: persistence dir: %v", err)
		}
	}
	b := &Broker{Host: "127.0.0.1", bin: bin, ConfPath: filepath.Join(dir, "mosquitto.conf"), LogPath: filepath.Join(dir, "mosquitto.log")}
	t.Cleanup(func() {
		if err := b.Stop(); err != nil {
			t.Errorf("mosquittotest: stop: %v", err)
		}
		if t.Failed() {
			t.Logf("mosquitto log (%s):\n%s", b.LogPath, b.Log())
		}
	})
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ { // a free port may be taken between pick and bind
		port, err := freePort()
		if err != nil {
			t.Fatalf("mosquittotest: %v", err)
		}
		b.Port = port
		b.Addr = net.JoinHostPort(b.Host, strconv.Itoa(port))
		if err := os.WriteFile(b.ConfPath, []byte(opts.config(port, b.LogPath)), 0o644); err != nil {
			t.Fatalf("mosquittotest: write config: %v", err)
		}
		if lastErr = b.start(); lastErr == nil {
			return b
		}
	}
	t.Fatalf("mosquittotest: %v\nlog:\n%s", lastErr, b.Log())
	return nil
}

func (o Options) validate() error {
	if o.MaxInflight < 0 || o.MaxQueued < 0 {
		return fmt.Errorf("negative limit: MaxInflight=%d MaxQueued=%d", o.MaxInflight, o.MaxQueued)
	}
	if o.PersistDir != "" && !o.Persistence {
		return errors.New("PersistDir set but Persistence off")
	}
	for _, l := range o.Extra {
		if strings.ContainsAny(l, "\r\n") {
			return fmt.Errorf("extra config line %q contains a newline", l)
		}
	}
	return nil
}

// config renders the mosquitto.conf text.
func (o Options) config(port int, logPath string) string {
	var c strings.Builder
	if os.Getuid() == 0 {
		c.WriteString("user root\n") // do not drop to user mosquitto: it could not write our temp dir
	} else if u, err := user.Current(); err == nil {
		fmt.Fprintf(&c, "user %s\n", u.Username)
	}
	fmt.Fprintf(&c, "listener %d 127.0.0.1\n", port)
	c.WriteString("allow_anonymous true\n")
	fmt.Fprintf(&c, "log_dest file %s\n", logPath)
	c.WriteString("log_type all\nconnection_messages true\nlog_timestamp true\n")
	if o.Persistence {
		c.WriteString("persistence true\n")
		fmt.Fprintf(&c, "persistence_location %s/\n", o.PersistDir)
		c.WriteString("autosave_interval 0\n") // save at exit (SIGTERM) and on SIGUSR1
	} else {
		c.WriteString("persistence false\n")
	}
	if o.MaxInflight > 0 {
		fmt.Fprintf(&c, "max_inflight_messages %d\n", o.MaxInflight)
	}
	if o.MaxQueued > 0 {
		fmt.Fprintf(&c, "max_queued_messages %d\n", o.MaxQueued)
	}
	for _, l := range o.Extra {
		c.WriteString(l + "\n")
	}
	return c.String()
}

// freePort asks the kernel for a free loopback TCP port.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("pick a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// start launches the process and waits for its port.
func (b *Broker) start() error {
	cmd := exec.Command(b.bin, "-c", b.ConfPath)
	cmd.Stdout, cmd.Stderr = nil, nil // everything goes to the log file
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", b.bin, err)
	}
	done := make(chan struct{})
	b.mu.Lock()
	b.cmd, b.done, b.err = cmd, done, nil
	b.mu.Unlock()
	go func() {
		err := cmd.Wait()
		b.mu.Lock()
		b.err = err
		b.mu.Unlock()
		close(done)
	}()
	deadline := time.Now().Add(StartTimeout)
	for {
		select {
		case <-done:
			return fmt.Errorf("mosquitto exited before accepting connections: %v", b.waitErr())
		default:
		}
		c, err := net.DialTimeout("tcp", b.Addr, 200*time.Millisecond)
		if err == nil {
			c.Close()
			return nil
		}
		if time.Now().After(deadline) {
			_ = b.Stop()
			return fmt.Errorf("mosquitto did not accept connections on %s within %v: %w", b.Addr, StartTimeout, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (b *Broker) waitErr() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.err
}

// Stop sends SIGTERM and waits for the process to exit (killing it after
// StopTimeout). With persistence on, mosquitto saves its database on the way
// out. Stopping a stopped broker is a no-op.
func (b *Broker) Stop() error {
	b.mu.Lock()
	cmd, done := b.cmd, b.done
	b.cmd = nil
	b.mu.Unlock()
	if cmd == nil {
		return nil
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-done:
		return nil
	case <-time.After(StopTimeout):
		_ = cmd.Process.Kill()
		<-done
		return fmt.Errorf("mosquitto ignored SIGTERM for %v and was killed", StopTimeout)
	}
}

// Kill stops the broker with SIGKILL: nothing is saved.
func (b *Broker) Kill() {
	b.mu.Lock()
	cmd, done := b.cmd, b.done
	b.cmd = nil
	b.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Kill()
	<-done
}

// Restart stops the broker and starts it again on the same port with the same
// config (with persistence on it reloads its saved state).
func (b *Broker) Restart(t testing.TB) {
	t.Helper()
	if err := b.Stop(); err != nil {
		t.Fatalf("mosquittotest: restart: %v", err)
	}
	if err := b.start(); err != nil {
		t.Fatalf("mosquittotest: restart: %v", err)
	}
}

// Running reports whether the broker process is alive.
func (b *Broker) Running() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.cmd == nil {
		return false
	}
	select {
	case <-b.done:
		return false
	default:
		return true
	}
}

// Log returns the broker's log so far (or why it cannot be read).
func (b *Broker) Log() string {
	data, err := os.ReadFile(b.LogPath)
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	return string(data)
}
