//go:build unix

package mqttlab_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mqttlab/mqttlab/internal/mosquittotest"
)

// The docs' runnable commands (docs/README.md, "Runnable commands"): a fenced
// block whose info string is "sh runnable" holds commands that run as
// written, from the repository root's point of view, with simrun on PATH.
// Each line is one command (a trailing backslash continues it), run by
// sh -c; a line starting with # is a comment. A command must exit 0 unless
// its comment, or a comment line just before it, says "exit N".

// docCommand is one runnable command of a doc file.
type docCommand struct {
	line int    // 1-based line of the command's first line in its file
	text string // the command, continuation lines joined
	exit int    // the exit status the docs promise
}

// runnableFence opens a runnable block.
const runnableFence = "```sh runnable"

// exitComment finds the promised exit status in a command's comment.
var exitComment = regexp.MustCompile(`\bexit (\d+)\b`)

// shellComment returns the comment of a shell command line: from the first
// '#' that starts a word outside quotes to the end ("" when there is none).
func shellComment(line string) string {
	var quote rune
	prev := ' '
	for i, r := range line {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			}
		case r == '\'' || r == '"':
			quote = r
		case r == '#' && (prev == ' ' || prev == '\t'):
			return line[i:]
		}
		prev = r
	}
	return ""
}

// runnableCommands returns the commands of the runnable blocks of a doc's
// text, in order, or an error naming a block that is never closed.
func runnableCommands(text string) ([]docCommand, error) {
	var cmds []docCommand
	lines := strings.Split(text, "\n")
	open := 0 // line of the open runnable fence, 0 outside one
	var cur *docCommand
	pending := -1 // the exit status a comment line promised the next command
	for i, raw := range lines {
		line := strings.TrimRight(raw, " \t\r")
		switch {
		case open == 0:
			if strings.TrimSpace(line) == runnableFence {
				open = i + 1
			}
			continue
		case strings.TrimSpace(line) == "```":
			if cur != nil {
				return nil, fmt.Errorf("line %d: the block ends inside a continued command", i+1)
			}
			open = 0
			continue
		}
		if cur == nil {
			trimmed := strings.TrimSpace(line)
			if trimmed == "" {
				continue
			}
			if strings.HasPrefix(trimmed, "#") {
				if m := exitComment.FindStringSubmatch(trimmed); m != nil {
					pending, _ = strconv.Atoi(m[1])
				}
				continue
			}
			cur = &docCommand{line: i + 1}
		}
		if body, ok := strings.CutSuffix(line, `\`); ok {
			cur.text += body + " "
			continue
		}
		cur.text += line
		cur.text = strings.TrimSpace(cur.text)
		if m := exitComment.FindStringSubmatch(shellComment(cur.text)); m != nil {
			cur.exit, _ = strconv.Atoi(m[1])
		} else if pending >= 0 {
			cur.exit = pending
		}
		cmds = append(cmds, *cur)
		cur, pending = nil, -1
	}
	if open != 0 {
		return nil, fmt.Errorf("line %d: runnable block never closed", open)
	}
	return cmds, nil
}

func TestRunnableCommandsParse(t *testing.T) {
	for _, tt := range []struct {
		name, text string
		want       []docCommand
		wantErr    bool
	}{
		{"plain sh blocks do not run", "```sh\nsimrun campaign\n```\n", nil, false},
		{"one command", "x\n```sh runnable\nsimrun run -seed 1\n```\n", []docCommand{{3, "simrun run -seed 1", 0}}, false},
		{"comments and blanks skipped", "```sh runnable\n# a comment\n\nsimrun presets   # the presets\n```", []docCommand{{4, "simrun presets   # the presets", 0}}, false},
		{"exit status from the comment", "```sh runnable\nsimrun campaign -preset legacy   # exit 1: seeds fail\n```", []docCommand{{2, "simrun campaign -preset legacy   # exit 1: seeds fail", 1}}, false},
		{"an apostrophe in the comment", "```sh runnable\nsimrun run -seed 1   # exit 1: the world's seed\n```", []docCommand{{2, "simrun run -seed 1   # exit 1: the world's seed", 1}}, false},
		{"a # inside a word is no comment", "```sh runnable\nsimrun run -workload a#exit 1\n```", []docCommand{{2, "simrun run -workload a#exit 1", 0}}, false},
		{"a # inside quotes is no comment", "```sh runnable\nsimrun live -subscriber 'sub -t a/# exit 3'\n```", []docCommand{{2, "simrun live -subscriber 'sub -t a/# exit 3'", 0}}, false},
		{"continuation lines", "```sh runnable\nsimrun live \\\n    -seed 3   # exit 2\n```", []docCommand{{2, "simrun live      -seed 3   # exit 2", 2}}, false},
		{"exit status from the comment line before", "```sh runnable\n# exit 1: the canary\nsimrun fuzz-broker\n# and then\nsimrun run\n```", []docCommand{{3, "simrun fuzz-broker", 1}, {5, "simrun run", 0}}, false},
		{"the command's own comment wins", "```sh runnable\n# exit 1\nsimrun run   # exit 2\n```", []docCommand{{3, "simrun run   # exit 2", 2}}, false},
		{"two blocks", "```sh runnable\na\n```\ntext\n```sh runnable\nb # exit 130\n```", []docCommand{{2, "a", 0}, {6, "b # exit 130", 130}}, false},
		{"unclosed block", "```sh runnable\na\n", nil, true},
		{"block ends mid-command", "```sh runnable\na \\\n```\n", nil, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := runnableCommands(tt.text)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

// docFiles are the files whose runnable blocks run: README.md and docs/*.md.
func docFiles(t *testing.T) []string {
	files, err := filepath.Glob(filepath.Join("docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	return append([]string{"README.md"}, files...)
}

// docFixtures are the repository's directories a doc command may read,
// copied into each file's working directory at the same relative path.
var docFixtures = []string{"docs/experiments", "seqchart/testdata", "cmd/simrun/testdata"}

// commandTimeout bounds one doc command; a runnable command takes seconds.
const commandTimeout = 3 * time.Minute

// TestDocCommands runs every runnable command of README.md and docs/*.md with
// a freshly built simrun first on PATH, each file's commands in order in a
// fresh directory holding copies of docFixtures, and checks each exits with
// the status its comment promises (0 when it says none). The files run in
// parallel, their commands in order. Some commands run Debian's mosquitto
// and mosquitto-clients: without them the test skips, and fails under CI.
func TestDocCommands(t *testing.T) {
	for _, prog := range []string{"mosquitto", "mosquitto_sub", "mosquitto_pub"} {
		mosquittotest.Require(t, prog) // docs/live.md runs them; skips locally without, fails under CI
	}
	bin := t.TempDir()
	build := exec.Command(goTool(), "build", "-o", filepath.Join(bin, "simrun"), "./cmd/simrun")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/simrun: %v\n%s", err, out)
	}
	env := append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	ran := 0
	for _, file := range docFiles(t) {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		cmds, err := runnableCommands(string(data))
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if len(cmds) == 0 {
			continue
		}
		ran += len(cmds)
		t.Run(file, func(t *testing.T) {
			t.Parallel() // the files' directories are apart; live runs mostly wait
			dir := t.TempDir()
			for _, fx := range docFixtures {
				copyTree(t, fx, filepath.Join(dir, fx))
			}
			for _, c := range cmds {
				if err := runDocCommand(dir, env, c); err != nil {
					t.Errorf("%s:%d: %v", file, c.line, err)
				}
			}
		})
	}
	if ran == 0 {
		t.Fatal("no runnable command in README.md or docs/*.md")
	}
}

// TestDocCommandCanary proves the check fails a command whose exit status
// is not the one its comment promises, and passes one that keeps it.
func TestDocCommandCanary(t *testing.T) {
	dir, env := t.TempDir(), os.Environ()
	for _, tt := range []struct {
		text string
		ok   bool
	}{
		{"true", true},
		{"exit 1   # exit 1: a failing seed", true},
		{"exit 1", false},
		{"true   # exit 1", false},
		{"exit 2   # exit 1", false},
		{"no-such-command-anywhere", false},
	} {
		cmds, err := runnableCommands(runnableFence + "\n" + tt.text + "\n```\n")
		if err != nil || len(cmds) != 1 {
			t.Fatalf("%q: %v, %d commands", tt.text, err, len(cmds))
		}
		if err := runDocCommand(dir, env, cmds[0]); (err == nil) != tt.ok {
			t.Errorf("%q: check says %v, want it to pass: %v", tt.text, err, tt.ok)
		}
	}
}

// runDocCommand runs c by sh -c in dir, in a process group of its own that
// it kills on timeout, and reports an exit status other than c.exit.
func runDocCommand(dir string, env []string, c docCommand) error {
	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", c.text)
	cmd.Dir, cmd.Env = dir, env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	out, err := cmd.CombinedOutput()
	status := 0
	var exitErr *exec.ExitError
	switch {
	case ctx.Err() != nil:
		return fmt.Errorf("%s: still running after %v\n%s", c.text, commandTimeout, tail(out))
	case errors.As(err, &exitErr):
		status = exitErr.ExitCode()
	case err != nil:
		return fmt.Errorf("%s: %v", c.text, err)
	}
	if status != c.exit {
		return fmt.Errorf("%s: exit status %d, the docs say %d\n%s", c.text, status, c.exit, tail(out))
	}
	return nil
}

// tail returns the last lines of a command's output, for a failure message.
func tail(out []byte) string {
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(lines) > 20 {
		lines = append([]string{"..."}, lines[len(lines)-20:]...)
	}
	return strings.Join(lines, "\n")
}

// copyTree copies the directory src to dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, info.Mode().Perm())
	})
	if err != nil {
		t.Fatal(err)
	}
}

// goTool is the go command of the toolchain running the test.
func goTool() string {
	if p := filepath.Join(runtime.GOROOT(), "bin", "go"); fileExists(p) {
		return p
	}
	return "go"
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
