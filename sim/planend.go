package sim

import (
	"fmt"
	"hash/crc32"
	"strconv"
	"strings"
)

// ErrPlanNotWhole is wrapped (with ErrPlan) by the errors of a plan file
// that does not prove it is whole: a PlanFormat plan without its end line
// (cut short), or one whose end line does not match the text before it.
var ErrPlanNotWhole = fmt.Errorf("%w: not whole", ErrPlan)

// endLine is a plan's last line, "end ops=N crc32=XXXXXXXX": the number of
// ops and the CRC-32 (IEEE) of the lines before it (linesCRC).
type endLine struct {
	line int    // its line number
	ops  int    // the op count it states
	sum  uint32 // the checksum it states
	text uint32 // the checksum of the lines before it
}

// appendEndLine appends the end line of a plan of ops ops whose text before
// the end line has checksum sum.
func appendEndLine(b *strings.Builder, ops int, sum uint32) {
	fmt.Fprintf(b, "end ops=%d crc32=%08x\n", ops, sum)
}

// linesCRC is the checksum an end line states: the CRC-32 (IEEE) of every
// line of text (blank and comment lines included), each with its
// surrounding white space trimmed (what the parser reads) and ended by a
// newline. A text's last line, if it has no newline, counts as a line.
func linesCRC(text string) uint32 {
	text = strings.TrimSuffix(text, "\n")
	if text == "" {
		return 0
	}
	return crcOfLines(strings.Split(text, "\n"))
}

// crcOfLines is linesCRC of lines already split.
func crcOfLines(lines []string) uint32 {
	sum := uint32(0)
	for _, l := range lines {
		sum = crc32.Update(sum, crc32.IEEETable, []byte(strings.TrimSpace(l)))
		sum = crc32.Update(sum, crc32.IEEETable, []byte{'\n'})
	}
	return sum
}

// isEndLine reports whether a trimmed plan line is an end line (no op or
// header is called "end").
func isEndLine(line string) bool {
	return line == "end" || strings.HasPrefix(line, "end ") || strings.HasPrefix(line, "end\t")
}

// parseEndLine reads the end line at line number n, before which come the
// raw lines before.
func parseEndLine(line string, n int, before []string) (*endLine, error) {
	f := strings.Fields(line)
	bad := fmt.Errorf("end line %q: want \"end ops=N crc32=XXXXXXXX\" (the file was cut short or damaged)", line)
	if len(f) != 3 || !strings.HasPrefix(f[1], "ops=") || !strings.HasPrefix(f[2], "crc32=") {
		return nil, bad
	}
	ops, err := strconv.Atoi(strings.TrimPrefix(f[1], "ops="))
	hex := strings.TrimPrefix(f[2], "crc32=")
	sum, err2 := strconv.ParseUint(hex, 16, 32)
	if err != nil || ops < 0 || err2 != nil || len(hex) != 8 {
		return nil, bad
	}
	return &endLine{line: n, ops: ops, sum: uint32(sum), text: crcOfLines(before)}, nil
}

// check verifies the end line against the parsed plan p: a PlanFormat plan
// must have one, and its op count and checksum must match.
func (e *endLine) check(p Plan) error {
	if e == nil {
		if p.Header.Format >= PlanFormat {
			return fmt.Errorf("%w: no end line after %d ops (a format %d plan ends with \"end ops=N crc32=XXXXXXXX\"): the file was cut short", ErrPlanNotWhole, len(p.Ops), PlanFormat)
		}
		return nil
	}
	if e.ops != len(p.Ops) {
		return fmt.Errorf("%w: line %d: the end line counts %d ops, the plan has %d: ops were lost or added", ErrPlanNotWhole, e.line, e.ops, len(p.Ops))
	}
	if e.sum != e.text {
		return fmt.Errorf("%w: line %d: the end line's crc32=%08x is not the text's %08x: the file was changed or damaged after it was written", ErrPlanNotWhole, e.line, e.sum, e.text)
	}
	return nil
}
