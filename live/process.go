package live

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Process-control errors.
var (
	// ErrTemplate reports a command template with an unknown or unclosed
	// placeholder.
	ErrTemplate = errors.New("live: bad command template")
	// ErrNotStarted reports a subject that exited or never opened its port
	// within the start timeout.
	ErrNotStarted = errors.New("live: subject did not start")
)

// KillWait bounds how long a kill waits for a process to be reaped.
const KillWait = 5 * time.Second

// Placeholders are the names a command template may use.
var Placeholders = []string{"port", "dir", "id", "topic", "qos", "msg"}

// Expand replaces each {name} of template by vars[name], shell-quoted when
// it holds anything but letters, digits and -_./:=,@+. A placeholder that is
// not one of Placeholders, or has no value in vars, is an error wrapping
// ErrTemplate.
func Expand(template string, vars map[string]string) (string, error) {
	return expand(template, vars, shellQuote)
}

// ExpandText fills the placeholders of a text that is not a command line
// (a config file template): values go in as they are.
func ExpandText(template string, vars map[string]string) (string, error) {
	return expand(template, vars, func(s string) string { return s })
}

func expand(template string, vars map[string]string, quote func(string) string) (string, error) {
	var b strings.Builder
	rest := template
	for {
		i := strings.IndexByte(rest, '{')
		if i < 0 {
			b.WriteString(rest)
			return b.String(), nil
		}
		b.WriteString(rest[:i])
		j := strings.IndexByte(rest[i:], '}')
		if j < 0 {
			return "", fmt.Errorf("%w: unclosed { in %q", ErrTemplate, template)
		}
		name := rest[i+1 : i+j]
		v, ok := vars[name]
		if !ok {
			return "", fmt.Errorf("%w: {%s} in %q is not available here (known: {%s})", ErrTemplate, name, template, strings.Join(Placeholders, "} {"))
		}
		b.WriteString(quote(v))
		rest = rest[i+j+1:]
	}
}

// CheckTemplate reports the first placeholder of template that is not in
// allowed.
func CheckTemplate(template string, allowed ...string) error {
	vars := map[string]string{}
	for _, a := range allowed {
		vars[a] = "x"
	}
	_, err := Expand(template, vars)
	return err
}

// shellQuote quotes s for sh when it needs it.
func shellQuote(s string) string {
	safe := s != ""
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=,@+", r)) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// FreePort asks the kernel for a free loopback TCP port.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("live: pick a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// ProcOptions configures a subject process.
type ProcOptions struct {
	// Name names it in errors and logs.
	Name string
	// Command is a shell command line (run by /bin/sh -c).
	Command string
	// Env is added to the tester's environment.
	Env []string
	// Log receives the process's stdout and stderr (nil: discarded). It is
	// appended to: a restarted subject keeps one log.
	Log *os.File
	// OnLine is called with every stdout line, in order, from one
	// goroutine (nil: none).
	OnLine func(line string)
	// OnErrLine is called with every stderr line, in order, from one
	// goroutine (nil: none).
	OnErrLine func(line string)
	// Stdin gives the process a pipe for its standard input (Process.Stdin);
	// otherwise it reads /dev/null.
	Stdin bool
}

// Process is a running subject: a shell and everything it starts, in a
// process group of their own, so a kill reaches every process of it
// (pipelines, wrappers) and none is left behind.
type Process struct {
	opts    ProcOptions
	cmd     *exec.Cmd
	done    chan struct{} // closed once reaped and its stdout read
	exited  chan struct{} // closed once reaped
	state   *os.ProcessState
	stopped bool
	mu      sync.Mutex
	tail    tailBuffer
	stdin   io.WriteCloser
}

// StartProcess starts opts.Command in a new process group. The shell gets
// SIGKILL if the tester's thread that started it dies (Pdeathsig).
func StartProcess(opts ProcOptions) (*Process, error) {
	cmd := exec.Command("/bin/sh", "-c", opts.Command)
	cmd.Env = append(os.Environ(), opts.Env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("live: start %s: %w", opts.Name, err)
	}
	p := &Process{opts: opts, cmd: cmd, done: make(chan struct{}), exited: make(chan struct{})}
	var errW io.Writer = &p.tail
	if opts.Log != nil {
		errW = io.MultiWriter(opts.Log, &p.tail)
	}
	if opts.OnErrLine != nil {
		errW = io.MultiWriter(errW, &lineWriter{fn: opts.OnErrLine})
	}
	cmd.Stdout, cmd.Stderr = pw, errW
	if opts.Stdin {
		if p.stdin, err = cmd.StdinPipe(); err != nil {
			pr.Close()
			pw.Close()
			return nil, fmt.Errorf("live: start %s: %w", opts.Name, err)
		}
	}
	if err := cmd.Start(); err != nil {
		pr.Close()
		pw.Close()
		return nil, fmt.Errorf("live: start %s: %w", opts.Name, err)
	}
	pw.Close()
	read := make(chan struct{})
	go p.readStdout(pr, read)
	go func() {
		_ = cmd.Wait()
		p.mu.Lock()
		p.state = cmd.ProcessState
		p.mu.Unlock()
		close(p.exited)
		select { // a grandchild that escaped the group may hold stdout open
		case <-read:
		case <-time.After(KillWait):
			pr.Close()
		}
		close(p.done)
	}()
	return p, nil
}

func (p *Process) readStdout(r *os.File, read chan<- struct{}) {
	defer close(read)
	defer r.Close()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if p.opts.Log != nil {
			_, _ = p.opts.Log.WriteString(line + "\n")
		}
		if p.opts.OnLine != nil {
			p.opts.OnLine(line)
		}
	}
}

// Stdin is the write end of the process's standard input (nil unless
// ProcOptions.Stdin). Writes block while the pipe is full (a paused
// process).
func (p *Process) Stdin() io.WriteCloser { return p.stdin }

// Pid is the process id of the shell, which is also the process group id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Done is closed once the process exited and its stdout was read.
func (p *Process) Done() <-chan struct{} { return p.done }

// Exited reports whether the process has exited.
func (p *Process) Exited() bool {
	select {
	case <-p.exited:
		return true
	default:
		return false
	}
}

// ExitCode is the exit status once Done (-1 when killed by a signal, or
// still running).
func (p *Process) ExitCode() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.state == nil {
		return -1
	}
	return p.state.ExitCode()
}

// Stderr returns the last few KiB the process wrote to stderr.
func (p *Process) Stderr() string { return p.tail.String() }

// signal sends sig to the whole process group.
func (p *Process) signal(sig syscall.Signal) {
	if !p.Exited() {
		_ = syscall.Kill(-p.cmd.Process.Pid, sig)
	}
}

// Kill sends SIGKILL to the process group and waits (at most KillWait)
// until the shell is reaped. Killing a dead process is a no-op.
func (p *Process) Kill() error {
	p.signal(syscall.SIGKILL)
	select {
	case <-p.exited:
		return nil
	case <-time.After(KillWait):
		return fmt.Errorf("live: %s (pid %d) not reaped %v after SIGKILL", p.opts.Name, p.Pid(), KillWait)
	}
}

// Pause stops the process group (SIGSTOP).
func (p *Process) Pause() {
	p.mu.Lock()
	p.stopped = true
	p.mu.Unlock()
	p.signal(syscall.SIGSTOP)
}

// Resume continues a paused process group (SIGCONT).
func (p *Process) Resume() {
	p.mu.Lock()
	p.stopped = false
	p.mu.Unlock()
	p.signal(syscall.SIGCONT)
}

// Terminate sends SIGTERM (and SIGCONT, should it be paused) and waits up
// to grace for an exit, then kills.
func (p *Process) Terminate(grace time.Duration) error {
	p.signal(syscall.SIGTERM)
	p.signal(syscall.SIGCONT)
	select {
	case <-p.exited:
		return nil
	case <-time.After(grace):
		return p.Kill()
	}
}

// WaitPort waits until addr accepts TCP connections, the process exits, or
// timeout passes; the last two are errors wrapping ErrNotStarted that quote
// the process's stderr.
func (p *Process) WaitPort(addr string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		if p.Exited() {
			return fmt.Errorf("%w: %s exited (status %d%s) before accepting connections on %s; its stderr:\n%s", ErrNotStarted, p.opts.Name, p.ExitCode(), ExecHint(p.ExitCode()), addr, p.Stderr())
		}
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			c.Close()
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%w: %s did not accept connections on %s within %v; its stderr:\n%s", ErrNotStarted, p.opts.Name, addr, timeout, p.Stderr())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// tailBuffer keeps the last tailMax bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
}

const tailMax = 4096

func (t *tailBuffer) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, b...)
	if len(t.buf) > tailMax {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-tailMax:]...)
	}
	return len(b), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}

// Supervisor tracks every process the tester started, so that none
// outlives it: KillAll reaches each process group.
type Supervisor struct {
	mu    sync.Mutex
	procs map[*Process]struct{}
}

// NewSupervisor returns an empty supervisor.
func NewSupervisor() *Supervisor { return &Supervisor{procs: map[*Process]struct{}{}} }

// Start starts a process and tracks it until it is reaped.
func (s *Supervisor) Start(opts ProcOptions) (*Process, error) {
	p, err := StartProcess(opts)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.procs[p] = struct{}{}
	s.mu.Unlock()
	go func() {
		<-p.exited
		s.mu.Lock()
		delete(s.procs, p)
		s.mu.Unlock()
	}()
	return p, nil
}

// Running returns the process group ids still running, sorted.
func (s *Supervisor) Running() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []int
	for p := range s.procs {
		if !p.Exited() {
			out = append(out, p.Pid())
		}
	}
	sort.Ints(out)
	return out
}

// KillAll sends SIGKILL to every tracked process group and waits for each
// (each wait bounded by KillWait); it returns the first error.
func (s *Supervisor) KillAll() error {
	s.mu.Lock()
	procs := make([]*Process, 0, len(s.procs))
	for p := range s.procs {
		procs = append(procs, p)
	}
	s.mu.Unlock()
	var first error
	for _, p := range procs {
		if err := p.Kill(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// ExecHint reads a shell's exit status: 127 and 126 are the shell's own
// exec errors (command not found, not executable), "" otherwise.
func ExecHint(status int) string {
	switch status {
	case 127:
		return ": exec error, the shell did not find the command"
	case 126:
		return ": exec error, the command is not executable"
	}
	return ""
}
