package live

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/mqttlab/mqttlab/findings"
)

// summaryFindings is how many findings the summary lists, one line each.
const summaryFindings = 12

// findingWidth bounds a finding's summary line.
const findingWidth = 240

// findingsSummary is the summary's findings block: one line a finding
// (findings.md reads each), then nothing more: the counts follow it.
func (r *Report) findingsSummary(b *strings.Builder) {
	if len(r.Findings) == 0 {
		return
	}
	explained := 0
	for i := range r.Findings {
		explained += len(r.Findings[i].Explains)
	}
	fmt.Fprintf(b, "findings     %d (%d violations explained by them; findings.md reads each)\n", len(r.Findings), explained)
	for i := range r.Findings {
		if i == summaryFindings {
			fmt.Fprintf(b, "FINDING      ... and %d more (findings.md)\n", len(r.Findings)-i)
			break
		}
		fmt.Fprintf(b, "FINDING      %s\n", r.Findings[i].Line(i+1, findingWidth))
	}
}

// writeFindings writes findings.md and findings.json into dir.
func (r *Report) writeFindings(dir string) error {
	md := findings.Markdown(&r.History, r.Findings, len(r.Verdict.Violations))
	if err := os.WriteFile(filepath.Join(dir, "findings.md"), []byte(md), 0o644); err != nil {
		return err
	}
	js, err := findings.JSON(&r.History, r.Findings)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "findings.json"), append(js, '\n'), 0o644)
}
