package deploy

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// yamlLine is one meaningful line of a YAML document.
type yamlLine struct {
	indent int
	text   string
}

// parseYAML reads the YAML subset the manifest uses: block mappings, block
// lists (of scalars or mappings), flow lists of JSON strings, and plain or
// double-quoted scalars. Comments are whole lines. Tabs are refused.
func parseYAML(doc string) (any, error) {
	var lines []yamlLine
	for i, raw := range strings.Split(doc, "\n") {
		if strings.Contains(raw, "\t") {
			return nil, fmt.Errorf("line %d: tab character", i+1)
		}
		text := strings.TrimSpace(raw)
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		indent := len(raw) - len(strings.TrimLeft(raw, " "))
		if indent%2 != 0 {
			return nil, fmt.Errorf("line %d: indentation %d is not a multiple of 2", i+1, indent)
		}
		lines = append(lines, yamlLine{indent, strings.TrimRight(text, " ")})
	}
	if len(lines) == 0 {
		return nil, errors.New("empty document")
	}
	v, next, err := parseBlock(lines, 0, lines[0].indent)
	if err == nil && next != len(lines) {
		err = fmt.Errorf("unexpected %q", lines[next].text)
	}
	return v, err
}

// parseBlock parses the mapping or list starting at lines[i] at indent.
func parseBlock(lines []yamlLine, i, indent int) (any, int, error) {
	if strings.HasPrefix(lines[i].text, "- ") {
		return parseList(lines, i, indent)
	}
	m := make(map[string]any)
	for i < len(lines) && lines[i].indent == indent && !strings.HasPrefix(lines[i].text, "- ") {
		key, rest, ok := strings.Cut(lines[i].text, ":")
		if !ok {
			return nil, i, fmt.Errorf("%q is not key: value", lines[i].text)
		}
		if _, dup := m[key]; dup {
			return nil, i, fmt.Errorf("duplicate key %q", key)
		}
		rest = strings.TrimSpace(rest)
		i++
		if rest != "" {
			v, err := scalar(rest)
			if err != nil {
				return nil, i, err
			}
			m[key] = v
			continue
		}
		if i == len(lines) || lines[i].indent <= indent {
			return nil, i, fmt.Errorf("key %q has no value", key)
		}
		v, next, err := parseBlock(lines, i, lines[i].indent)
		if err != nil {
			return nil, next, err
		}
		m[key], i = v, next
	}
	return m, i, nil
}

// parseList parses a block list at indent; an item "- k: v" starts a
// mapping whose keys sit at indent+2.
func parseList(lines []yamlLine, i, indent int) (any, int, error) {
	var list []any
	for i < len(lines) && lines[i].indent == indent && strings.HasPrefix(lines[i].text, "- ") {
		item := strings.TrimPrefix(lines[i].text, "- ")
		if strings.Contains(item, ": ") || strings.HasSuffix(item, ":") {
			sub := slices.Clone(lines)
			sub[i] = yamlLine{indent + 2, item}
			v, next, err := parseBlock(sub, i, indent+2)
			if err != nil {
				return nil, next, err
			}
			list, i = append(list, v), next
			continue
		}
		v, err := scalar(item)
		if err != nil {
			return nil, i, err
		}
		list, i = append(list, v), i+1
	}
	return list, i, nil
}

// scalar reads a flow list of JSON strings, a quoted string or a plain one.
func scalar(s string) (any, error) {
	switch {
	case strings.HasPrefix(s, "["):
		var l []string
		if err := json.Unmarshal([]byte(s), &l); err != nil {
			return nil, fmt.Errorf("flow list %s: %w", s, err)
		}
		out := make([]any, len(l))
		for i, e := range l {
			out[i] = e
		}
		return out, nil
	case strings.HasPrefix(s, `"`):
		return strconv.Unquote(s)
	}
	return s, nil
}

// get walks a parsed document by keys and list indexes ("0", "1", ...).
func get(v any, path ...string) any {
	for _, p := range path {
		switch n := v.(type) {
		case map[string]any:
			v = n[p]
		case []any:
			i, err := strconv.Atoi(p)
			if err != nil || i < 0 || i >= len(n) {
				return nil
			}
			v = n[i]
		default:
			return nil
		}
	}
	return v
}

// str returns get as a string ("" when absent or not a string).
func str(v any, path ...string) string {
	s, _ := get(v, path...).(string)
	return s
}

// stringList returns get as a list of strings.
func stringList(v any, path ...string) []string {
	l, _ := get(v, path...).([]any)
	out := make([]string, 0, len(l))
	for _, e := range l {
		s, _ := e.(string)
		out = append(out, s)
	}
	return out
}

// after returns the argument after flag in args ("" when absent).
func after(args []string, flag string) string {
	if i := slices.Index(args, flag); i >= 0 && i+1 < len(args) {
		return args[i+1]
	}
	return ""
}

// checkManifest checks the campaign manifest: every document names itself;
// the campaign is an Indexed Job whose completions match the -shard count;
// each shard writes /results/shard-$(JOB_COMPLETION_INDEX) on the shared
// claim; JOB_COMPLETION_INDEX comes from the completion-index annotation;
// and the merge Job reads exactly the shards 0..N-1 from the same claim.
func checkManifest(src string) error {
	claim, campaign, merge, err := parseManifest(src)
	if err != nil {
		return err
	}
	n, err := strconv.Atoi(str(campaign, "spec", "completions"))
	if err != nil || n < 1 {
		return fmt.Errorf("campaign completions %q is not a positive count", str(campaign, "spec", "completions"))
	}
	if p, err := strconv.Atoi(str(campaign, "spec", "parallelism")); err != nil || p < 1 || p > n {
		return fmt.Errorf("campaign parallelism %q is not in 1..%d", str(campaign, "spec", "parallelism"), n)
	}
	pod := get(campaign, "spec", "template", "spec")
	c := get(pod, "containers", "0")
	args := stringList(c, "args")
	switch {
	case str(pod, "restartPolicy") != "Never":
		return errors.New("campaign pods must not restart in place: restartPolicy Never")
	case len(args) == 0 || args[0] != "campaign":
		return fmt.Errorf("campaign container args %q do not run simrun campaign", args)
	case after(args, "-shard") != fmt.Sprintf("$(JOB_COMPLETION_INDEX)/%d", n):
		return fmt.Errorf("-shard %q does not match completions %d", after(args, "-shard"), n)
	case after(args, "-out") != "/results/shard-$(JOB_COMPLETION_INDEX)":
		return fmt.Errorf("-out %q is not /results/shard-$(JOB_COMPLETION_INDEX)", after(args, "-out"))
	case str(c, "env", "0", "name") != "JOB_COMPLETION_INDEX" ||
		!strings.Contains(str(c, "env", "0", "valueFrom", "fieldRef", "fieldPath"), "batch.kubernetes.io/job-completion-index"):
		return errors.New("JOB_COMPLETION_INDEX is not taken from the job-completion-index annotation")
	}
	if err := checkVolume(pod, c, claim); err != nil {
		return fmt.Errorf("campaign: %w", err)
	}
	mpod := get(merge, "spec", "template", "spec")
	margs := stringList(mpod, "containers", "0", "args")
	want := []string{"merge"}
	for i := range n {
		want = append(want, fmt.Sprintf("/results/shard-%d", i))
	}
	if !slices.Equal(margs, want) {
		return fmt.Errorf("merge args %q, want %q", margs, want)
	}
	if err := checkVolume(mpod, get(mpod, "containers", "0"), claim); err != nil {
		return fmt.Errorf("merge: %w", err)
	}
	return nil
}

// parseManifest parses the manifest's documents and returns the results
// claim's name, the Indexed campaign Job and the merge Job.
func parseManifest(src string) (claim string, campaign, merge any, err error) {
	for i, doc := range strings.Split(src, "\n---\n") {
		d, err := parseYAML(doc)
		if err != nil {
			return "", nil, nil, fmt.Errorf("document %d: %w", i, err)
		}
		if str(d, "apiVersion") == "" || str(d, "kind") == "" || str(d, "metadata", "name") == "" {
			return "", nil, nil, fmt.Errorf("document %d lacks apiVersion, kind or metadata.name", i)
		}
		switch {
		case str(d, "kind") == "PersistentVolumeClaim":
			if !slices.Contains(stringList(d, "spec", "accessModes"), "ReadWriteMany") {
				return "", nil, nil, errors.New("the results claim is not ReadWriteMany: shards on several nodes share it")
			}
			claim = str(d, "metadata", "name")
		case str(d, "kind") == "Job" && str(d, "spec", "completionMode") == "Indexed":
			campaign = d
		case str(d, "kind") == "Job" && str(d, "spec", "template", "spec", "containers", "0", "args", "0") == "merge":
			merge = d
		}
	}
	if claim == "" || campaign == nil || merge == nil {
		return "", nil, nil, fmt.Errorf("want a claim, an Indexed campaign Job (completionMode: Indexed) and a merge Job; got claim %q, campaign %v, merge %v", claim, campaign != nil, merge != nil)
	}
	return claim, campaign, merge, nil
}

// checkVolume checks the container mounts /results from the claim.
func checkVolume(pod, c any, claim string) error {
	name := ""
	for i := 0; get(c, "volumeMounts", strconv.Itoa(i)) != nil; i++ {
		if str(c, "volumeMounts", strconv.Itoa(i), "mountPath") == "/results" {
			name = str(c, "volumeMounts", strconv.Itoa(i), "name")
		}
	}
	for i := 0; name != "" && get(pod, "volumes", strconv.Itoa(i)) != nil; i++ {
		if str(pod, "volumes", strconv.Itoa(i), "name") == name && str(pod, "volumes", strconv.Itoa(i), "persistentVolumeClaim", "claimName") == claim {
			return nil
		}
	}
	return fmt.Errorf("/results is not mounted from claim %q", claim)
}

// readManifest reads campaign-job.yaml.
func readManifest(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile("campaign-job.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestManifest checks the committed manifest.
func TestManifest(t *testing.T) {
	if err := checkManifest(readManifest(t)); err != nil {
		t.Fatal(err)
	}
}

// TestManifestCheckCatches is the checker's canary: each broken variant of
// the manifest must be refused.
func TestManifestCheckCatches(t *testing.T) {
	src := readManifest(t)
	for _, tt := range []struct{ name, old, new string }{
		{"not indexed", "completionMode: Indexed", "completionMode: NonIndexed"},
		{"shard count differs", `"$(JOB_COMPLETION_INDEX)/8"`, `"$(JOB_COMPLETION_INDEX)/7"`},
		{"completions differ", "completions: 8", "completions: 9"},
		{"output not per shard", `"/results/shard-$(JOB_COMPLETION_INDEX)"]`, `"/results"]`},
		{"merge misses a shard", `, "/results/shard-7"]`, `]`},
		{"other claim", "claimName: mqttlab-results\n---", "claimName: other\n---"},
		{"no index variable", "job-completion-index", "job-index"},
		{"tab", "  completions: 8", "\tcompletions: 8"},
		{"odd indentation", "  parallelism: 8", "   parallelism: 8"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if !strings.Contains(src, tt.old) {
				t.Fatalf("the manifest has no %q to break", tt.old)
			}
			if err := checkManifest(strings.Replace(src, tt.old, tt.new, 1)); err == nil {
				t.Fatal("the broken manifest passes the check")
			}
		})
	}
}

// TestParseYAML covers the subset reader itself.
func TestParseYAML(t *testing.T) {
	v, err := parseYAML("# c\na:\n  b: \"x y\"\n  l:\n    - p\n    - k: v\n      m: [\"1\", \"2\"]\nc: d\n")
	if err != nil {
		t.Fatal(err)
	}
	if str(v, "a", "b") != "x y" || str(v, "a", "l", "0") != "p" || str(v, "a", "l", "1", "k") != "v" ||
		!slices.Equal(stringList(v, "a", "l", "1", "m"), []string{"1", "2"}) || str(v, "c") != "d" {
		t.Fatalf("parsed %#v", v)
	}
	for _, bad := range []string{"a:\n", "a: b\na: c\n", "a\n", "a: [1]\n"} {
		if _, err := parseYAML(bad); err == nil {
			t.Errorf("parseYAML(%q) accepted it", bad)
		}
	}
}
