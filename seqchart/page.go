package seqchart

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"strings"

	"github.com/mqttlab/mqttlab/model"
)

// Run is what a chart draws: a run's history, what the model found in it,
// and how to replay it.
type Run struct {
	Title      string            // the page's title, e.g. "seed 4 · preset legacy · profile swarm"
	Replay     string            // the command that replays the run ("" if none)
	Plan       string            // the plan file's text, shown folded ("" if none)
	Notes      []string          // lines shown under the title (the judge, the faults...)
	History    model.History     // the run's events
	Violations []model.Violation // what the model found; the first leads the page
}

//go:embed assets/chart.css
var chartCSS string

//go:embed assets/chart.js
var chartJS string

// Write writes r's chart as one self-contained HTML page: the data, the
// style and the script are inline, nothing is fetched, and the page opens
// from disk.
func Write(w io.Writer, r Run) error {
	data, err := json.Marshal(build(r)) // escapes <, > and &: safe inside <script>
	if err != nil {
		return fmt.Errorf("seqchart: %w", err)
	}
	var b strings.Builder
	b.WriteString("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
	b.WriteString("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n")
	fmt.Fprintf(&b, "<title>%s</title>\n", html.EscapeString(r.Title))
	b.WriteString("<style>\n" + chartCSS + "</style>\n</head>\n<body>\n")
	b.WriteString(`<noscript>This chart needs JavaScript.</noscript>` + "\n")
	b.WriteString(`<script type="application/json" id="seqchart-data">`)
	b.Write(data)
	b.WriteString("</script>\n<script>\n" + chartJS + "</script>\n</body>\n</html>\n")
	_, err = io.WriteString(w, b.String())
	return err
}
