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

// ossFuzzSkip is the target OSS-Fuzz does not build: it fails on its needle
// by design.
const ossFuzzSkip = "Fuzz" + "Canary"

// fuzzTarget is a Fuzz function found in the sources under fuzz/: dir is
// its package directory relative to fuzz/ ("." or e.g. "codec"), file its
// path relative to fuzz/.
type fuzzTarget struct {
	name, dir, file string
}

// buildDir is the target's package directory as build.sh names it,
// relative to the module root.
func (ft fuzzTarget) buildDir() string {
	return filepath.ToSlash(filepath.Join("fuzz", ft.dir))
}

// fuzzSignature is the form compile_native_go_fuzzer's sed rewrites.
var fuzzSignature = regexp.MustCompile(`(?m)^func (Fuzz\w+)\(([a-zA-Z0-9]*) \*testing\.F\) \{$`)

// parseTargets returns the Fuzz functions of every package under fuzz/,
// failing the test for any in a form the tooling cannot rewrite.
func parseTargets(t *testing.T) []fuzzTarget {
	t.Helper()
	var targets []fuzzTarget
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		if d.Name() == "testdata" {
			return filepath.SkipDir
		}
		targets = append(targets, parseDir(t, path)...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(targets) == 0 {
		t.Fatal("no fuzz targets found")
	}
	return targets
}

// parseDir returns the Fuzz functions of the package in dir.
func parseDir(t *testing.T, dir string) []fuzzTarget {
	t.Helper()
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	paths, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
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
			case f.Name.Name != filepath.Base(abs):
				t.Errorf("%s: %s is in package %s, not %s (the directory's name)", path, name, f.Name.Name, filepath.Base(abs))
			case !isFuzzSignature(fn.Type):
				t.Errorf("%s: %s is not func(f *testing.F) with no results", path, name)
			case !slices.ContainsFunc(fuzzSignature.FindAllStringSubmatch(string(src), -1), func(m []string) bool { return m[1] == name }):
				t.Errorf("%s: %s is not written `func %s(f *testing.F) {` on one line, the form the tooling's sed rewrites", path, name, name)
			}
			targets = append(targets, fuzzTarget{name: name, dir: dir, file: path})
		}
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

// module is the module path; build.sh names packages relative to it.
const module = "github.com/mqttlab/mqttlab"

// TestOSSFuzzTargetsMatchGoTestList checks the parsed targets are exactly
// the ones `go test -list` reports for the packages under fuzz/, package by
// package.
func TestOSSFuzzTargetsMatchGoTestList(t *testing.T) {
	var parsed []string
	for _, ft := range parseTargets(t) {
		parsed = append(parsed, ft.buildDir()+"."+ft.name)
	}
	out, err := exec.Command("go", "test", "-list", "^Fuzz", "./...").CombinedOutput()
	if err != nil {
		t.Fatalf("go test -list: %v\n%s", err, out)
	}
	listed, pending := listedTargets(string(out))
	if len(pending) > 0 {
		t.Fatalf("go test -list printed %v without the package line after them:\n%s", pending, out)
	}
	slices.Sort(parsed)
	slices.Sort(listed)
	if !slices.Equal(parsed, listed) {
		t.Fatalf("parsed targets %v, go test -list %v", parsed, listed)
	}
}

// listedTargets reads the output of `go test -list` over several packages:
// each package's names come before its "ok  <import path>" line. It returns
// "DIR.Name" with DIR relative to the module root, and the names left
// without a package line.
func listedTargets(out string) (listed, pending []string) {
	for _, line := range strings.Split(out, "\n") {
		fields := strings.Fields(line)
		switch {
		case len(fields) == 1 && strings.HasPrefix(fields[0], "Fuzz"):
			pending = append(pending, fields[0])
		case len(fields) >= 2 && fields[0] == "ok":
			dir := strings.TrimPrefix(fields[1], module+"/")
			for _, name := range pending {
				listed = append(listed, dir+"."+name)
			}
			pending = nil
		}
	}
	return listed, pending
}

// buildLine is one `build DIR NAME BINARY` line of build.sh.
var buildLine = regexp.MustCompile(`(?m)^build ([\w/]+) (\w+) (\w+)$`)

// TestOSSFuzzBuildListsEveryTarget checks build.sh builds every target but
// the canary, from its own package, under a unique binary name, and
// nothing else.
func TestOSSFuzzBuildListsEveryTarget(t *testing.T) {
	src, err := os.ReadFile("oss-fuzz/build.sh")
	if err != nil {
		t.Fatal(err)
	}
	built := make(map[string]string) // DIR.FuzzName -> binary
	binaries := make(map[string]bool)
	for _, m := range buildLine.FindAllStringSubmatch(string(src), -1) {
		key := m[1] + ".Fuzz" + m[2]
		if _, dup := built[key]; dup || binaries[m[3]] {
			t.Errorf("build.sh builds %s or binary %s twice", key, m[3])
		}
		built[key], binaries[m[3]] = m[3], true
	}
	if len(built) == 0 {
		t.Fatal("build.sh has no `build DIR NAME BINARY` line")
	}
	for _, ft := range parseTargets(t) {
		key := ft.buildDir() + "." + ft.name
		_, ok := built[key]
		switch {
		case ft.name == ossFuzzSkip && ok:
			t.Errorf("build.sh builds the canary, which fails by design")
		case ft.name != ossFuzzSkip && !ok:
			t.Errorf("oss-fuzz/build.sh does not build %s (add `build %s %s fuzz_...`)", key, ft.buildDir(), strings.TrimPrefix(ft.name, "Fuzz"))
		}
		delete(built, key)
	}
	for key := range built {
		t.Errorf("build.sh builds %s, which is not a fuzz target of that package", key)
	}
	if info, err := os.Stat("oss-fuzz/build.sh"); err != nil || info.Mode()&0o111 == 0 {
		t.Errorf("oss-fuzz/build.sh is not executable: %v", err)
	}
}

// TestOSSFuzzTargetNamesUnique checks compile_native_go_fuzzer's
// `grep -r -l NAME` over the package directory (subdirectories included)
// finds only the file that defines each target.
func TestOSSFuzzTargetNamesUnique(t *testing.T) {
	for _, ft := range parseTargets(t) {
		if ft.name == ossFuzzSkip {
			continue
		}
		var hits []string
		err := filepath.WalkDir(ft.dir, func(path string, d fs.DirEntry, err error) error {
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
		if out, err := exec.Command("go", "build", "-overlay", path, "./"+filepath.ToSlash(ft.dir)).CombinedOutput(); err != nil {
			t.Errorf("%s does not build from %s and the non-test files alone: %v\n%s", ft.name, ft.file, err, out)
		}
	}
}

// TestOSSFuzzCorpusDirs checks every target has a committed corpus.
func TestOSSFuzzCorpusDirs(t *testing.T) {
	for _, ft := range parseTargets(t) {
		ents, err := os.ReadDir(filepath.Join(ft.dir, "testdata", "fuzz", ft.name))
		if err != nil || len(ents) == 0 {
			t.Errorf("%s has no seed corpus in %s: %v", ft.name, filepath.Join(ft.buildDir(), "testdata", "fuzz"), err)
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
		"oss-fuzz/build.sh":                {`cd "$SRC/mqttlab"`, "compile_native_go_fuzzer \"$MODULE/$1\" \"Fuzz$2\" \"$3\"", "MODULE=" + module},
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

// codecImports is all the codec target's package (fuzz/codec) may import,
// in its test files included: Go's fuzzer pays on every execution for each
// package linked into the test binary, so a test helper there that imports,
// say, os/exec would slow the codec target down.
var codecImports = []string{"errors", "testing", module + "/engine/packet"}

// TestCodecPackageStaysSmall checks fuzz/codec imports only codecImports
// and links no project or third-party package but engine/packet.
func TestCodecPackageStaysSmall(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{join .Imports \"\\n\"}}\n{{join .TestImports \"\\n\"}}\n{{join .XTestImports \"\\n\"}}", "./codec").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, imp := range strings.Fields(string(out)) {
		if !slices.Contains(codecImports, imp) {
			t.Errorf("fuzz/codec imports %s; keep it to %v", imp, codecImports)
		}
	}
	out, err = exec.Command("go", "list", "-test", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", "./codec").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if dep, _, _ := strings.Cut(line, " "); dep != module+"/engine/packet" && !strings.HasPrefix(dep, module+"/fuzz/codec") {
			t.Errorf("the fuzz/codec test binary links %s", line)
		}
	}
}
