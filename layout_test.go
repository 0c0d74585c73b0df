package mqttlab_test

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

const mod = "github.com/mqttlab/mqttlab"

// allowed lists, per package, the non-standard packages it may depend on
// (directly or not): project packages by path, third-party ones by module
// prefix. internal/histpkt is the packet-to-model translation that both
// worlds (sim and live) share; everything above sim reaches it through sim. A dependency not matched by its list is a forbidden edge.
var allowed = map[string][]string{
	"engine/packet":         {},
	"engine":                {"engine/packet"},
	"model":                 {},
	"sim":                   {"engine", "engine/packet", "model", "internal/histpkt"},
	"live":                  {"engine", "engine/packet", "model", "internal/histpkt", "findings"},
	"findings":              {"model"}, // groups violations into findings; sim, live and cmd/simrun share it
	"internal/histpkt":      {"engine/packet", "model"},
	"properties":            {"internal/histpkt", "sim", "model", "engine", "engine/packet", "pgregory.net/rapid"},
	"fuzz/codec":            {"engine/packet"}, // its test binary is kept small on purpose (fuzz/ossfuzz_test.go)
	"fuzz":                  {"internal/histpkt", "properties", "sim", "model", "engine", "engine/packet", "pgregory.net/rapid", "github.com/AdaLogics/go-fuzz-headers"},
	"plots":                 {"internal/histpkt", "sim", "model", "engine", "engine/packet", "gonum.org/", "codeberg.org/", "git.sr.ht/", "github.com/ajstarks/", "github.com/golang/freetype", "golang.org/x/image", "golang.org/x/text"},
	"brokerfuzz":            {"engine/packet"},                                                                                                // the wire fuzzer: the codec is its oracle; it starts no broker itself
	"seqchart":              {"model"},                                                                                                        // reads a history and a plan's text; knows nothing of the engine
	"live/adapters/paho-go": {"github.com/eclipse/paho.mqtt.golang", "golang.org/x/net", "golang.org/x/sync", "github.com/gorilla/websocket"}, // a subject, not part of the lab: only its library
	"cmd/simrun":            {"brokerfuzz", "live", "findings", "internal/histpkt", "sim", "model", "plots", "seqchart", "engine", "engine/packet", "gonum.org/", "codeberg.org/", "git.sr.ht/", "github.com/ajstarks/", "github.com/golang/freetype", "golang.org/x/", "github.com/schollz/progressbar", "github.com/mitchellh/colorstring", "github.com/rivo/uniseg"},
}

// forbiddenEdge reports the first dependency of pkg that its allow-list does
// not cover, given the dependency list of `go list -deps`.
func forbiddenEdge(pkg string, deps []string) (string, bool) {
	allow := allowed[pkg]
	for _, d := range deps {
		if d == mod+"/"+pkg {
			continue
		}
		if rel, ok := strings.CutPrefix(d, mod+"/"); ok {
			if !contains(allow, rel) {
				return d, true
			}
			continue
		}
		if !hasPrefix(allow, d) {
			return d, true
		}
	}
	return "", false
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func hasPrefix(list []string, s string) bool {
	for _, x := range list {
		if strings.Contains(x, ".") && strings.HasPrefix(s, x) {
			return true
		}
	}
	return false
}

// nonStandardDeps runs `go list -deps` on a package and returns its
// non-standard dependencies.
func nonStandardDeps(t *testing.T, pkg string) []string {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", "./"+pkg).Output()
	if err != nil {
		t.Fatalf("go list -deps ./%s: %v", pkg, err)
	}
	var deps []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" {
			deps = append(deps, l)
		}
	}
	return deps
}

// TestImportEdges fails on any import edge that ../shared/DESIGN.md forbids.
func TestImportEdges(t *testing.T) {
	pkgs := make([]string, 0, len(allowed))
	for p := range allowed {
		pkgs = append(pkgs, p)
	}
	sort.Strings(pkgs)
	for _, p := range pkgs {
		if d, bad := forbiddenEdge(p, nonStandardDeps(t, p)); bad {
			t.Errorf("forbidden import edge: %s -> %s", p, d)
		}
	}
}

// TestForbiddenEdgeCanary proves the checker bites: edges DESIGN.md forbids
// are reported.
func TestForbiddenEdgeCanary(t *testing.T) {
	cases := []struct{ pkg, dep string }{
		{"model", mod + "/engine"},
		{"engine", mod + "/sim"},
		{"engine/packet", "pgregory.net/rapid"},
		{"sim", "gonum.org/v1/plot"},
		{"cmd/simrun", mod + "/properties"},
		{"cmd/simrun", "pgregory.net/rapid"},
		{"seqchart", mod + "/engine"},
		{"seqchart", mod + "/sim"},
	}
	for _, c := range cases {
		if _, bad := forbiddenEdge(c.pkg, []string{c.dep}); !bad {
			t.Errorf("edge %s -> %s not reported", c.pkg, c.dep)
		}
	}
	if d, bad := forbiddenEdge("sim", []string{mod + "/engine", mod + "/model"}); bad {
		t.Errorf("allowed edge reported: sim -> %s", d)
	}
}

// nondeterminism matches what the pure packages must not use.
var nondeterminism = regexp.MustCompile(`time\.(Now|Sleep|After|Tick|NewTimer|NewTicker|Since|Until)\(|^\s*go [a-zA-Z_(]|"math/rand"|make\(chan |<-\s*[a-zA-Z_]|\brand\.(Int|IntN|Int32|Int64|Int64N|Uint32|Uint64|N|Float32|Float64|Perm|Shuffle|Seed)\(`)

// TestDeterminismRules scans the non-test Go files of engine, model and sim
// for wall-clock time, goroutines, channels and package-level math/rand.
func TestDeterminismRules(t *testing.T) {
	for _, dir := range []string{"engine", "model", "sim"} {
		_ = filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			for i, line := range strings.Split(string(data), "\n") {
				code, _, _ := strings.Cut(line, "//")
				if nondeterminism.MatchString(code) {
					t.Errorf("%s:%d: nondeterminism in a pure package: %s", path, i+1, strings.TrimSpace(line))
				}
			}
			return nil
		})
	}
}

// TestDeterminismCanary proves the scanner bites.
func TestDeterminismCanary(t *testing.T) {
	for _, bad := range []string{`t := time.Now()`, `go func() {}()`, `import "math/rand"`, `c := make(chan int)`, `x := <-c`, `time.Sleep(1)`, `n := rand.IntN(4)`} {
		if !nondeterminism.MatchString(bad) {
			t.Errorf("not caught: %s", bad)
		}
	}
	for _, ok := range []string{`var now Time`, `"math/rand/v2"`, `x := a <= b`, `n := r.IntN(4)`} {
		if nondeterminism.MatchString(ok) {
			t.Errorf("false positive: %s", ok)
		}
	}
}
