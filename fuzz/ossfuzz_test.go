package fuzz

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// This file checks that the fuzz targets build with OSS-Fuzz's and
// ClusterFuzzLite's native Go tooling (compile_native_go_fuzzer and
// go-118-fuzz-build), whose constraints are:
//
//   - the target is `func FuzzX(f *testing.F)` in a _test.go file (a sed
//     rewrites exactly that form);
//   - `grep -r -l FuzzX` over the package directory finds exactly one file;
//   - that file, renamed to a non-test file, builds with the package's
//     non-test files alone.
//
// It never spells a target's name: that would break the grep rule.

// ossFuzzSkip is the target OSS-Fuzz does not build: it fails only when its
// environment variable is set.
const ossFuzzSkip = "Fuzz" + "Canary"

// fuzzTarget is a Fuzz function found in the package's sources.
type fuzzTarget struct {
	name, file string
}

// fuzzSignature is the form compile_native_go_fuzzer's sed rewrites.
var fuzzSignature = regexp.MustCompile(`(?m)^func (Fuzz\w+)\(([a-zA-Z0-9]*) \*testing\.F\) \{$`)

// parseTargets returns the package's Fuzz functions, failing the test for
// any in a form the tooling cannot rewrite.
func parseTargets(t *testing.T) []fuzzTarget {
	t.Helper()
	fset := token.NewFileSet()
	paths, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var targets []fuzzTarget
	for _, path := range paths {
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, path, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || !strings.HasPrefix(fn.Name.Name, "Fuzz") || !ast.IsExported(fn.Name.Name) {
				continue
			}
			name := fn.Name.Name
			switch {
			case !strings.HasSuffix(path, "_test.go"):
				t.Errorf("%s: %s is in a non-test file; the tooling rewrites _test.go files", path, name)
			case f.Name.Name != "fuzz":
				t.Errorf("%s: %s is in package %s, not fuzz", path, name, f.Name.Name)
			case !isFuzzSignature(fn.Type):
				t.Errorf("%s: %s is not func(f *testing.F) with no results", path, name)
			case !slices.ContainsFunc(fuzzSignature.FindAllStringSubmatch(string(src), -1), func(m []string) bool { return m[1] == name }):
				t.Errorf("%s: %s is not written `func %s(f *testing.F) {` on one line, the form the tooling's sed rewrites", path, name, name)
			}
			targets = append(targets, fuzzTarget{name: name, file: path})
		}
	}
	if len(targets) == 0 {
		t.Fatal("no fuzz targets found")
	}
	return targets
}

// isFuzzSignature reports whether ft is (x *testing.F) with no results.
func isFuzzSignature(ft *ast.FuncType) bool {
	if ft.Results != nil || len(ft.Params.List) != 1 || len(ft.Params.List[0].Names) != 1 {
		return false
	}
	star, ok := ft.Params.List[0].Type.(*ast.StarExpr)
	if !ok {
		return false
	}
	sel, ok := star.X.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	pkg, ok := sel.X.(*ast.Ident)
	return ok && pkg.Name == "testing" && sel.Sel.Name == "F"
}

// TestOSSFuzzTargetsMatchGoTestList checks the parsed targets are exactly
// the ones `go test -list` reports.
func TestOSSFuzzTargetsMatchGoTestList(t *testing.T) {
	var parsed []string
	for _, ft := range parseTargets(t) {
		parsed = append(parsed, ft.name)
	}
	out, err := exec.Command("go", "test", "-list", "^Fuzz", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go test -list: %v\n%s", err, out)
	}
	var listed []string
	for _, line := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(line, "Fuzz") {
			listed = append(listed, strings.TrimSpace(line))
		}
	}
	slices.Sort(parsed)
	slices.Sort(listed)
	if !slices.Equal(parsed, listed) {
		t.Fatalf("parsed targets %v, go test -list %v", parsed, listed)
	}
}

// buildLine is one `build NAME BINARY` line of build.sh.
var buildLine = regexp.MustCompile(`(?m)^build (\w+) (\w+)$`)

// TestOSSFuzzBuildListsEveryTarget checks build.sh builds every target but
// the canary, under a unique binary name, and nothing else.
func TestOSSFuzzBuildListsEveryTarget(t *testing.T) {
	src, err := os.ReadFile("oss-fuzz/build.sh")
	if err != nil {
		t.Fatal(err)
	}
	built := make(map[string]string) // target -> binary
	binaries := make(map[string]bool)
	for _, m := range buildLine.FindAllStringSubmatch(string(src), -1) {
		name := "Fuzz" + m[1]
		if _, dup := built[name]; dup || binaries[m[2]] {
			t.Errorf("build.sh builds %s or binary %s twice", name, m[2])
		}
		built[name], binaries[m[2]] = m[2], true
	}
	targets := parseTargets(t)
	for _, ft := range targets {
		if _, ok := built[ft.name]; !ok && ft.name != ossFuzzSkip {
			t.Errorf("oss-fuzz/build.sh does not build %s (add `build %s fuzz_...`)", ft.name, strings.TrimPrefix(ft.name, "Fuzz"))
		}
		delete(built, ft.name)
	}
	if _, ok := built[ossFuzzSkip]; ok {
		t.Errorf("build.sh builds the canary, which only fails with its variable set")
	}
	for name := range built {
		t.Errorf("build.sh builds %s, which is not a fuzz target", name)
	}
	if info, err := os.Stat("oss-fuzz/build.sh"); err != nil || info.Mode()&0o111 == 0 {
		t.Errorf("oss-fuzz/build.sh is not executable: %v", err)
	}
}

// TestOSSFuzzTargetNamesUnique checks compile_native_go_fuzzer's
// `grep -r -l NAME` over the package directory finds only the file that
// defines each target.
func TestOSSFuzzTargetNamesUnique(t *testing.T) {
	for _, ft := range parseTargets(t) {
		if ft.name == ossFuzzSkip {
			continue
		}
		var hits []string
		err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			data, err := os.ReadFile(path)
			if err == nil && strings.Contains(string(data), ft.name) {
				hits = append(hits, path)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) != 1 || hits[0] != ft.file {
			t.Errorf("the name %s appears in %v; compile_native_go_fuzzer needs it only in %s (rephrase the other mentions)", ft.name, hits, ft.file)
		}
	}
}

// TestOSSFuzzTargetsBuildAlone builds the package the way go-118-fuzz-build
// does for each target: its non-test files plus the target's file renamed
// to a non-test file (through a build overlay, so the tree is untouched).
func TestOSSFuzzTargetsBuildAlone(t *testing.T) {
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for _, ft := range parseTargets(t) {
		overlay := map[string]map[string]string{"Replace": {
			filepath.Join(dir, ft.file+"_fuzz_.go"): filepath.Join(dir, ft.file),
		}}
		data, err := json.Marshal(overlay)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "overlay.json")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command("go", "build", "-overlay", path, ".").CombinedOutput(); err != nil {
			t.Errorf("%s does not build from %s and the non-test files alone: %v\n%s", ft.name, ft.file, err, out)
		}
	}
}

// TestOSSFuzzCorpusDirs checks every target has a committed corpus.
func TestOSSFuzzCorpusDirs(t *testing.T) {
	for _, ft := range parseTargets(t) {
		ents, err := os.ReadDir(filepath.Join("testdata", "fuzz", ft.name))
		if err != nil || len(ents) == 0 {
			t.Errorf("%s has no seed corpus in testdata/fuzz: %v", ft.name, err)
		}
	}
}

// TestFuzzPackagingFiles checks the OSS-Fuzz and ClusterFuzzLite files
// agree: Go projects on the Go base builder, one shared build script.
func TestFuzzPackagingFiles(t *testing.T) {
	want := map[string][]string{
		"oss-fuzz/project.yaml":            {"language: go", "main_repo:", "libfuzzer"},
		"oss-fuzz/Dockerfile":              {"FROM gcr.io/oss-fuzz-base/base-builder-go", "fuzz/oss-fuzz/build.sh $SRC/build.sh"},
		"../.clusterfuzzlite/project.yaml": {"language: go"},
		"../.clusterfuzzlite/Dockerfile":   {"FROM gcr.io/oss-fuzz-base/base-builder-go", "COPY . $SRC/mqttlab", ".clusterfuzzlite/build.sh $SRC/build.sh"},
		"../.clusterfuzzlite/build.sh":     {`exec "$SRC/mqttlab/fuzz/oss-fuzz/build.sh"`},
		"oss-fuzz/build.sh":                {`cd "$SRC/mqttlab"`, "compile_native_go_fuzzer \"$PKG\" \"Fuzz$1\" \"$2\"", "PKG=github.com/mqttlab/mqttlab/fuzz"},
	}
	for path, needles := range want {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Error(err)
			continue
		}
		for _, n := range needles {
			if !strings.Contains(string(data), n) {
				t.Errorf("%s lacks %q", path, n)
			}
		}
	}
}
