package live_test

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mqttlab/mqttlab/live"
)

func TestExpand(t *testing.T) {
	vars := map[string]string{"port": "1883", "dir": "/tmp/a b", "id": "s1", "msg": "m-1"}
	for _, c := range []struct{ in, want, err string }{
		{"mosquitto -p {port}", "mosquitto -p 1883", ""},
		{"x -c {dir}/m.conf", "x -c '/tmp/a b'/m.conf", ""},
		{"sub -i {id} -m {msg}", "sub -i s1 -m m-1", ""},
		{"no placeholders", "no placeholders", ""},
		{"x {topic}", "", "{topic}"},
		{"x {nope}", "", "{nope}"},
		{"x {port", "", "unclosed"},
	} {
		got, err := live.Expand(c.in, vars)
		if c.err != "" {
			if !errors.Is(err, live.ErrTemplate) || !strings.Contains(err.Error(), c.err) {
				t.Errorf("Expand(%q) error %v, want ErrTemplate naming %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("Expand(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}

// procState is the state letter of /proc/pid/stat ("" when gone).
func procState(pid int) string {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ""
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 || i+2 >= len(s) {
		return ""
	}
	return s[i+2 : i+3]
}

// alive reports whether pid is a live (not zombie) process.
func alive(pid int) bool {
	st := procState(pid)
	return st != "" && st != "Z" && st != "X"
}

// startPids starts a subject that forks two grandchildren, prints their
// pids, and waits; it returns the process and the grandchildren's pids.
func startPids(t *testing.T, sv *live.Supervisor) (*live.Process, []int) {
	t.Helper()
	var mu sync.Mutex
	var pids []int
	got := make(chan struct{})
	p, err := sv.Start(live.ProcOptions{Name: "forker", Command: "sleep 300 & echo $!; sleep 300 | cat & echo $!; wait",
		OnLine: func(l string) {
			n, err := strconv.Atoi(l)
			if err != nil {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			if pids = append(pids, n); len(pids) == 2 {
				close(got)
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-got:
	case <-time.After(10 * time.Second):
		p.Kill()
		t.Fatal("the subject did not print its children's pids")
	}
	mu.Lock()
	defer mu.Unlock()
	return p, append([]int{p.Pid()}, pids...)
}

// TestProcessKillLeavesNoOrphans: SIGKILL of a subject reaches its whole
// process group (the shell and the programs it forked), Pause and Resume
// stop and continue it, and KillAll of the supervisor leaves nothing
// running.
func TestProcessKillLeavesNoOrphans(t *testing.T) {
	sv := live.NewSupervisor()
	t.Cleanup(func() { sv.KillAll() })
	p, pids := startPids(t, sv)
	p.Pause()
	waitState(t, pids[1], "T")
	p.Resume()
	waitState(t, pids[1], "S")
	if err := p.Kill(); err != nil {
		t.Fatal(err)
	}
	for _, pid := range pids {
		waitGone(t, pid)
	}
	_, pids = startPids(t, sv)
	if err := sv.KillAll(); err != nil {
		t.Fatal(err)
	}
	for _, pid := range pids {
		waitGone(t, pid)
	}
	if r := sv.Running(); len(r) != 0 {
		t.Errorf("supervisor still tracks %v", r)
	}
}

// waitState waits (bounded) until pid is in state st ("T" stopped, "S"
// sleeping).
func waitState(t *testing.T, pid int, st string) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); procState(pid) != st; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("pid %d in state %q, want %q", pid, procState(pid), st)
		}
	}
}

// waitGone waits (bounded) until pid is dead: a killed grandchild is
// reaped by init, which may take a moment.
func waitGone(t *testing.T, pid int) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); alive(pid); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("pid %d still alive (state %s) after the kill: an orphan", pid, procState(pid))
		}
	}
}

// TestProcessNotStarted: a subject that exits before opening its port is
// reported with its stderr.
func TestProcessNotStarted(t *testing.T) {
	sv := live.NewSupervisor()
	t.Cleanup(func() { sv.KillAll() })
	p, err := sv.Start(live.ProcOptions{Name: "broken", Command: "echo 'no such option -z' >&2; exit 3"})
	if err != nil {
		t.Fatal(err)
	}
	port, err := live.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	err = p.WaitPort("127.0.0.1:"+strconv.Itoa(port), 10*time.Second)
	if !errors.Is(err, live.ErrNotStarted) || !strings.Contains(err.Error(), "no such option -z") || !strings.Contains(err.Error(), "status 3") {
		t.Fatalf("WaitPort: %v; want ErrNotStarted quoting the stderr and status", err)
	}
}
