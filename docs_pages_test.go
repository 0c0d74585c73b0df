//go:build unix

package mqttlab_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// The shape of the docs (issue 22): the README stays short, a long page
// opens with a table of contents, and every relative link and anchor
// resolves.

const (
	readmeMaxLines = 300 // the README is the user's path, not a notebook
	tocFromLines   = 150 // a page longer than this opens with a table of contents
)

// headingSlug is the anchor GitHub gives a heading: lower case, spaces to
// hyphens, punctuation other than hyphens and underscores dropped.
func headingSlug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// headings returns the anchors of a markdown text's headings (outside code
// fences) and the 0-based line of its first "## " heading (-1 if none).
func headings(text string) (anchors map[string]bool, sections []string, firstSection int) {
	anchors, firstSection = map[string]bool{}, -1
	fence := false
	for i, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fence = !fence
			continue
		}
		if fence || !strings.HasPrefix(line, "#") {
			continue
		}
		title := strings.TrimLeft(line, "#")
		slug := headingSlug(strings.ReplaceAll(title, "`", ""))
		anchors[slug] = true
		if strings.HasPrefix(line, "## ") {
			sections = append(sections, slug)
			if firstSection < 0 {
				firstSection = i
			}
		}
	}
	return anchors, sections, firstSection
}

func TestHeadingSlug(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"Quick start", "quick-start"},
		{"What a run is held to: promises and -judge", "what-a-run-is-held-to-promises-and--judge"},
		{"Codec, against paho.golang's packets", "codec-against-pahogolangs-packets"},
		{"mosquitto_sub as a persistent QoS 2 subscriber", "mosquitto_sub-as-a-persistent-qos-2-subscriber"},
		{"6. Judge your own broker", "6-judge-your-own-broker"},
	} {
		if got := headingSlug(tt.in); got != tt.want {
			t.Errorf("headingSlug(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestReadmeShort(t *testing.T) {
	data, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(data), "\n"); n > readmeMaxLines {
		t.Errorf("README.md has %d lines, more than %d: move the detail to a page of docs/", n, readmeMaxLines)
	}
}

// TestDocsTableOfContents: a page of docs/ over tocFromLines lines links
// each of its "## " sections before the first of them.
func TestDocsTableOfContents(t *testing.T) {
	for _, file := range docFiles(t)[1:] {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if err := checkTOC(string(data)); err != nil {
			t.Errorf("%s: %v", file, err)
		}
	}
}

// checkTOC reports a long page whose opening does not link every section.
func checkTOC(text string) error {
	lines := strings.Split(text, "\n")
	if len(lines) <= tocFromLines {
		return nil
	}
	_, sections, first := headings(text)
	if first < 0 {
		return nil
	}
	opening := strings.Join(lines[:first], "\n")
	var missing []string
	for _, s := range sections {
		if !strings.Contains(opening, "(#"+s+")") {
			missing = append(missing, "#"+s)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%d lines, and its table of contents (before its first section) lacks %s", len(lines), strings.Join(missing, ", "))
	}
	return nil
}

func TestCheckTOCCanary(t *testing.T) {
	long := strings.Repeat("text\n", tocFromLines)
	if err := checkTOC("# T\n\n- [A](#a)\n- [B b](#b-b)\n\n## A\n" + long + "## B b\n"); err != nil {
		t.Errorf("a complete table of contents is refused: %v", err)
	}
	if err := checkTOC("# T\n\n- [A](#a)\n\n## A\n" + long + "## B b\n"); err == nil || !strings.Contains(err.Error(), "#b-b") {
		t.Errorf("a table of contents without #b-b passes: %v", err)
	}
	if err := checkTOC("# T\n\n## A\n" + long); err == nil {
		t.Error("a long page without a table of contents passes")
	}
	if err := checkTOC("# T\n\n## A\nshort\n"); err != nil {
		t.Errorf("a short page needs no table of contents, got %v", err)
	}
}

// mdLink matches a markdown link or image target: ](target).
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// TestDocsLinks: every relative link of README.md and docs/*.md names a file
// of the repository, and every #anchor a heading of its target.
func TestDocsLinks(t *testing.T) {
	for _, file := range docFiles(t) {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, err := range brokenLinks(file, string(data), os.ReadFile) {
			t.Errorf("%s: %v", file, err)
		}
	}
}

// brokenLinks returns an error per relative link of file's text whose
// target file cannot be read or whose anchor is no heading of it.
func brokenLinks(file, text string, read func(string) ([]byte, error)) []error {
	var errs []error
	fence := false
	for i, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fence = !fence
		}
		if fence {
			continue
		}
		for _, m := range mdLink.FindAllStringSubmatch(line, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			path, anchor, _ := strings.Cut(target, "#")
			targetText := text
			if path != "" {
				full := filepath.Join(filepath.Dir(file), path)
				data, err := read(full)
				if err != nil {
					if info, serr := os.Stat(full); serr == nil && info.IsDir() {
						continue // a link to a directory
					}
					errs = append(errs, fmt.Errorf("line %d: link %q: no such file %s", i+1, target, full))
					continue
				}
				targetText = string(data)
			}
			if anchor == "" {
				continue
			}
			if anchors, _, _ := headings(targetText); !anchors[anchor] {
				errs = append(errs, fmt.Errorf("line %d: link %q: no heading #%s there", i+1, target, anchor))
			}
		}
	}
	return errs
}

func TestBrokenLinksCanary(t *testing.T) {
	files := map[string]string{"docs/a.md": "# A\n\n## Some part\n"}
	read := func(p string) ([]byte, error) {
		if s, ok := files[p]; ok {
			return []byte(s), nil
		}
		return nil, os.ErrNotExist
	}
	for _, tt := range []struct {
		text string
		ok   bool
	}{
		{"see [a](docs/a.md) and [its part](docs/a.md#some-part)", true},
		{"[here](#top)\n\n# Top\n", true},
		{"[web](https://example.org/x#y)", true},
		{"[gone](docs/b.md)", false},
		{"[no part](docs/a.md#other-part)", false},
		{"[no here](#nowhere)", false},
		{"```\n[in code](docs/b.md)\n```\n", true},
	} {
		if errs := brokenLinks("README.md", tt.text, read); (len(errs) == 0) != tt.ok {
			t.Errorf("%q: %v, want ok %v", tt.text, errs, tt.ok)
		}
	}
}
