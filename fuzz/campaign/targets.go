package main

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
)

// target is one fuzz target of one package.
type target struct {
	name  string // the function: FuzzDecode
	pkg   string // the package as the campaign passes it to go test: ./fuzz/codec
	dir   string // the package directory, as a path from where the campaign runs
	label string // how the campaign names it: name, or pkg.name if two packages share name
}

// qualified is the target's name with its package: fuzz/codec.FuzzDecode.
func (t target) qualified() string {
	return strings.TrimPrefix(t.pkg, "./") + "." + t.name
}

// pkgInfo is one package matched by the -pkg patterns.
type pkgInfo struct {
	importPath string
	arg        string // what go test is given: ./rel/path from the module root, or the import path
	dir        string // where its testdata is, from where the campaign runs
}

// listTargets expands the -pkg patterns with go list and lists the Fuzz
// targets of every package with one `go test -list '^Fuzz'`.
func listTargets(cfg config) ([]target, error) {
	pkgs, err := listPackages(cfg)
	if err != nil {
		return nil, err
	}
	args := []string{"test", "-list", "^Fuzz"}
	for _, p := range pkgs {
		args = append(args, p.importPath)
	}
	cmd := exec.Command(cfg.goCmd, args...)
	cmd.Dir = cfg.dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("listing the fuzz targets of %s: %w\n%s", strings.Join(cfg.pkgs, " "), err, out)
	}
	names, orphans := parseList(string(out))
	if len(orphans) > 0 {
		return nil, fmt.Errorf("go test -list printed %v with no package line after them:\n%s", orphans, out)
	}
	return labelTargets(pkgs, names), nil
}

// listPackages runs go list on the -pkg patterns.
func listPackages(cfg config) ([]pkgInfo, error) {
	args := append([]string{"list", "-f", "{{.ImportPath}}\t{{.Dir}}"}, cfg.pkgs...)
	cmd := exec.Command(cfg.goCmd, args...)
	cmd.Dir = cfg.dir
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list %s: %w\n%s", strings.Join(cfg.pkgs, " "), err, stderrOf(err))
	}
	root, err := filepath.Abs(cfg.dir)
	if err != nil {
		return nil, err
	}
	var pkgs []pkgInfo
	for _, line := range splitLines(string(out)) {
		path, dir, ok := strings.Cut(line, "\t")
		if !ok {
			continue
		}
		pkgs = append(pkgs, packageOf(cfg.dir, root, path, dir))
	}
	if len(pkgs) == 0 {
		return nil, fmt.Errorf("the patterns %s match no package", strings.Join(cfg.pkgs, " "))
	}
	return pkgs, nil
}

// stderrOf is the standard error an *exec.ExitError captured.
func stderrOf(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return string(ee.Stderr)
	}
	return ""
}

// packageOf names a package for go test and for its corpus files: relative
// to the module root (root, which the campaign reaches as base) when it is
// inside it, by import path and absolute directory otherwise.
func packageOf(base, root, importPath, dir string) pkgInfo {
	rel, err := filepath.Rel(root, dir)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return pkgInfo{importPath: importPath, arg: importPath, dir: dir}
	}
	arg := "./" + filepath.ToSlash(rel)
	if rel == "." {
		arg = "."
	}
	return pkgInfo{importPath: importPath, arg: arg, dir: filepath.Join(base, rel)}
}

// parseList reads `go test -list` output over several packages: each
// package prints its names, then its "ok  <import path>  <time>" line. It
// returns the names by import path, and the names no package line followed.
func parseList(out string) (names map[string][]string, orphans []string) {
	names = make(map[string][]string)
	for _, line := range splitLines(out) {
		fields := strings.Fields(line)
		switch {
		case len(fields) == 1 && fuzzNameRE.MatchString(fields[0]):
			orphans = append(orphans, fields[0])
		case len(fields) >= 2 && fields[0] == "ok":
			names[fields[1]] = append(names[fields[1]], orphans...)
			orphans = nil
		}
	}
	return names, orphans
}

// labelTargets makes the targets of pkgs, in package order: a target is
// labelled by its name, or by its qualified name when another package has
// a target of the same name.
func labelTargets(pkgs []pkgInfo, names map[string][]string) []target {
	count := make(map[string]int)
	for _, p := range pkgs {
		for _, n := range names[p.importPath] {
			count[n]++
		}
	}
	var targets []target
	for _, p := range pkgs {
		for _, n := range names[p.importPath] {
			t := target{name: n, pkg: p.arg, dir: p.dir, label: n}
			if count[n] > 1 {
				t.label = t.qualified()
			}
			targets = append(targets, t)
		}
	}
	return targets
}

// selectTargets keeps the listed targets whose label, name or qualified
// name matches the pattern; the canary target only with canary on.
func selectTargets(listed []target, match func(string) bool, canary bool) []target {
	var out []target
	for _, t := range listed {
		if t.name == canaryTarget && !canary {
			continue
		}
		if match(t.label) || match(t.name) || match(t.qualified()) {
			out = append(out, t)
		}
	}
	return out
}

// labels lists the targets' labels.
func labels(targets []target) []string {
	out := make([]string, len(targets))
	for i, t := range targets {
		out[i] = t.label
	}
	return out
}
