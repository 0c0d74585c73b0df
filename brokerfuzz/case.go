package brokerfuzz

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Case is one input: the bytes a client sends on each of its connections,
// as steps in the order they are sent.
type Case struct {
	// Seed is the generator seed that made it (0: written or shrunk by hand).
	Seed  uint64
	Steps []Step
}

// Step is one write on one connection.
type Step struct {
	// Conn numbers the connection, from 1; a connection opens at its first
	// step.
	Conn int
	// Version is the protocol version the connection meant to speak (its
	// CONNECT's level before any mutation): the broker's answers are read in
	// it.
	Version byte
	// Data is written as is.
	Data []byte
	// Note says what the generator meant, for the report.
	Note string
}

// markerPrefix starts the payload of every generated PUBLISH and will: a
// subscriber that receives it names the step that sent it.
const markerPrefix = "fzm-"

// ErrCaseFile is wrapped by every refusal of a case file.
var ErrCaseFile = errors.New("bad case file")

// WriteTo writes the case in its replay format: comment lines, then one
// "step CONN VERSION HEX # NOTE" line per step.
func (c Case) WriteTo(w io.Writer) (int64, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# simrun fuzz-broker case (replay: simrun fuzz-broker -replay FILE)\n")
	if c.Seed != 0 {
		fmt.Fprintf(&b, "seed %d\n", c.Seed)
	}
	for _, s := range c.Steps {
		fmt.Fprintf(&b, "step %d %d %s # %s\n", s.Conn, s.Version, hex.EncodeToString(s.Data), strings.ReplaceAll(s.Note, "\n", " "))
	}
	n, err := w.Write(b.Bytes())
	return int64(n), err
}

// String is the case in its replay format.
func (c Case) String() string {
	var b strings.Builder
	_, _ = c.WriteTo(&b)
	return b.String()
}

// ParseCase reads the replay format. Errors name the line.
func ParseCase(r io.Reader) (Case, error) {
	var c Case
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 16<<20)
	for n := 1; sc.Scan(); n++ {
		line, note, _ := strings.Cut(sc.Text(), "#")
		f := strings.Fields(line)
		bad := func(format string, args ...any) error {
			return fmt.Errorf("%w: line %d: %s", ErrCaseFile, n, fmt.Sprintf(format, args...))
		}
		switch {
		case len(f) == 0:
		case f[0] == "seed" && len(f) == 2:
			s, err := strconv.ParseUint(f[1], 10, 64)
			if err != nil {
				return c, bad("seed %q is not a number", f[1])
			}
			c.Seed = s
		case f[0] == "step" && len(f) == 4:
			st, err := parseStep(f[1:], strings.TrimSpace(note))
			if err != nil {
				return c, bad("%v", err)
			}
			c.Steps = append(c.Steps, st)
		default:
			return c, bad("want \"step CONN VERSION HEX\" or \"seed N\", got %q", strings.TrimSpace(line))
		}
	}
	if err := sc.Err(); err != nil {
		return c, err
	}
	if len(c.Steps) == 0 {
		return c, fmt.Errorf("%w: no step", ErrCaseFile)
	}
	return c, nil
}

func parseStep(f []string, note string) (Step, error) {
	conn, err := strconv.Atoi(f[0])
	if err != nil || conn < 1 || conn > maxConns {
		return Step{}, fmt.Errorf("connection %q is not a number in 1..%d", f[0], maxConns)
	}
	v, err := strconv.Atoi(f[1])
	if err != nil || (v != 3 && v != 4 && v != 5) {
		return Step{}, fmt.Errorf("version %q is not 3, 4 or 5", f[1])
	}
	data, err := hex.DecodeString(f[2])
	if err != nil {
		return Step{}, fmt.Errorf("bytes %q are not hex: %v", f[2], err)
	}
	return Step{Conn: conn, Version: byte(v), Data: data, Note: note}, nil
}

// maxConns bounds the connections of one case.
const maxConns = 16

// Conns is the number of connections the case uses.
func (c Case) Conns() int {
	n := 0
	for _, s := range c.Steps {
		n = max(n, s.Conn)
	}
	return n
}

// without returns the case less step i.
func (c Case) without(i int) Case {
	steps := append(append([]Step(nil), c.Steps[:i]...), c.Steps[i+1:]...)
	return Case{Seed: c.Seed, Steps: steps}
}
