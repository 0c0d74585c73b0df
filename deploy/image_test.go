package deploy

import (
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// dockerInstr is one instruction of a Dockerfile: FROM, RUN, COPY, ...
type dockerInstr struct {
	op   string // upper case
	args string
}

// dockerStage is one FROM and the instructions after it.
type dockerStage struct {
	base, name string
	instrs     []dockerInstr
}

// imageSpec is what the test reads from the Dockerfile.
type imageSpec struct {
	buildEnv  []string // the VAR=VALUE words before the build stage's go build
	buildArgs []string // go build's arguments
	output    string   // go build's -o, in the build stage
	binary    string   // where the final stage puts it
	path      []string // the final stage's PATH
	uid, gid  string   // the final stage's USER
}

// parseDockerfile splits a Dockerfile into stages: comment lines and blank
// lines dropped, continuation lines joined, every instruction after a FROM.
func parseDockerfile(src string) ([]dockerStage, error) {
	var stages []dockerStage
	joined := ""
	for i, raw := range strings.Split(src, "\n") {
		line := strings.TrimSpace(raw)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if rest, ok := strings.CutSuffix(line, "\\"); ok {
			joined += rest + " "
			continue
		}
		line, joined = joined+line, ""
		op, args, _ := strings.Cut(line, " ")
		in := dockerInstr{op: strings.ToUpper(op), args: strings.TrimSpace(args)}
		if in.op == "FROM" {
			f := strings.Fields(in.args)
			st := dockerStage{base: f[0]}
			if len(f) == 3 && strings.EqualFold(f[1], "AS") {
				st.name = f[2]
			} else if len(f) != 1 {
				return nil, fmt.Errorf("line %d: FROM %q is not IMAGE [AS NAME]", i+1, in.args)
			}
			stages = append(stages, st)
			continue
		}
		if len(stages) == 0 {
			return nil, fmt.Errorf("line %d: %s before the first FROM", i+1, in.op)
		}
		stages[len(stages)-1].instrs = append(stages[len(stages)-1].instrs, in)
	}
	if joined != "" {
		return nil, errors.New("the last line continues with \\")
	}
	return stages, nil
}

// checkDockerfile checks the image is a static simrun on an empty base:
// the final stage is FROM scratch and copies its binary from a build stage
// whose go build runs with CGO_ENABLED=0 on ./cmd/simrun, puts it on its
// PATH as simrun, and runs as a numeric non-root user.
func checkDockerfile(src string) (imageSpec, error) {
	var spec imageSpec
	stages, err := parseDockerfile(src)
	if err != nil {
		return spec, err
	}
	if len(stages) < 2 {
		return spec, fmt.Errorf("%d stage(s), want a build stage and a final stage", len(stages))
	}
	final := stages[len(stages)-1]
	if final.base != "scratch" {
		return spec, fmt.Errorf("the final stage is FROM %s, want scratch: the image holds only the static binary", final.base)
	}
	from, err := copyFrom(final, &spec)
	if err != nil {
		return spec, err
	}
	i := slices.IndexFunc(stages, func(s dockerStage) bool { return s.name == from })
	if i < 0 || i == len(stages)-1 {
		return spec, fmt.Errorf("COPY --from=%s names no earlier stage", from)
	}
	if err := buildCommand(stages[i], &spec); err != nil {
		return spec, err
	}
	if err := finalSettings(final, &spec); err != nil {
		return spec, err
	}
	if path.Base(spec.binary) != "simrun" || !slices.Contains(spec.path, path.Dir(spec.binary)) {
		return spec, fmt.Errorf("the binary %s is not simrun on the PATH %q", spec.binary, spec.path)
	}
	return spec, nil
}

// copyFrom reads the final stage's one COPY --from=STAGE SRC DEST and
// returns STAGE.
func copyFrom(final dockerStage, spec *imageSpec) (string, error) {
	var copies []string
	for _, in := range final.instrs {
		if in.op == "COPY" || in.op == "ADD" {
			copies = append(copies, in.args)
		}
	}
	if len(copies) != 1 {
		return "", fmt.Errorf("the final stage has %d COPY/ADD, want one: the binary", len(copies))
	}
	f := strings.Fields(copies[0])
	from, ok := strings.CutPrefix(f[0], "--from=")
	if !ok || len(f) != 3 {
		return "", fmt.Errorf("COPY %s is not --from=STAGE SRC DEST", copies[0])
	}
	spec.output, spec.binary = f[1], f[2]
	return from, nil
}

// buildCommand reads the build stage's RUN [VAR=VALUE...] go build ... and
// checks it builds ./cmd/simrun with cgo off into the file the final stage
// copies.
func buildCommand(st dockerStage, spec *imageSpec) error {
	copied := spec.output
	spec.output = ""
	for _, in := range st.instrs {
		words := strings.Fields(in.args)
		k := slices.IndexFunc(words, func(w string) bool { return !strings.Contains(w, "=") })
		if in.op != "RUN" || k < 0 || len(words) < k+2 || words[k] != "go" || words[k+1] != "build" {
			continue
		}
		if strings.ContainsAny(in.args, `"'$&;|`) {
			return fmt.Errorf("RUN %s: quotes, variables and shell operators are not supported by this check", in.args)
		}
		spec.buildEnv, spec.buildArgs = words[:k], words[k+2:]
	}
	args := spec.buildArgs
	switch {
	case args == nil:
		return fmt.Errorf("stage %s has no RUN go build", st.name)
	case !slices.Contains(spec.buildEnv, "CGO_ENABLED=0"):
		return fmt.Errorf("go build runs without CGO_ENABLED=0 (env %q): it would link libc dynamically", spec.buildEnv)
	case args[len(args)-1] != "./cmd/simrun":
		return fmt.Errorf("go build %q does not build ./cmd/simrun", args)
	}
	if i := slices.Index(args, "-o"); i >= 0 && i+1 < len(args) {
		spec.output = args[i+1]
	}
	if spec.output != copied {
		return fmt.Errorf("go build writes %q but the final stage copies %q", spec.output, copied)
	}
	return nil
}

// finalSettings reads the final stage's ENV PATH and USER.
func finalSettings(final dockerStage, spec *imageSpec) error {
	for _, in := range final.instrs {
		switch in.op {
		case "ENV":
			if p, ok := strings.CutPrefix(in.args, "PATH="); ok {
				spec.path = strings.Split(p, ":")
			}
		case "USER":
			spec.uid, spec.gid, _ = strings.Cut(in.args, ":")
		}
	}
	uid, err := strconv.Atoi(spec.uid)
	if err != nil || uid == 0 || spec.gid == "" {
		return fmt.Errorf("USER %q is not a numeric non-root uid:gid", spec.uid+":"+spec.gid)
	}
	return nil
}

// checkImageAgreement checks the manifest runs the image the Dockerfile
// builds: both simrun containers name one image and the binary, their pods
// run as the image's user with its group as fsGroup (so the shards can
// write /results), and every document's build and push commands name that
// image.
func checkImageAgreement(manifest string, spec imageSpec, docs map[string]string) error {
	_, campaign, merge, err := parseManifest(manifest)
	if err != nil {
		return err
	}
	image := ""
	for _, job := range []any{campaign, merge} {
		pod := get(job, "spec", "template", "spec")
		c := get(pod, "containers", "0")
		name := str(job, "metadata", "name")
		if image == "" {
			image = str(c, "image")
		}
		switch {
		case str(c, "image") != image || image == "":
			return fmt.Errorf("%s runs image %q, the campaign %q", name, str(c, "image"), image)
		case !slices.Equal(stringList(c, "command"), []string{path.Base(spec.binary)}):
			return fmt.Errorf("%s runs %q, the image has %s on its PATH", name, stringList(c, "command"), path.Base(spec.binary))
		case str(pod, "securityContext", "runAsUser") != spec.uid || str(pod, "securityContext", "runAsGroup") != spec.gid ||
			str(pod, "securityContext", "fsGroup") != spec.gid || str(pod, "securityContext", "runAsNonRoot") != "true":
			return fmt.Errorf("%s's pod securityContext %v does not run as the image's user %s:%s with fsGroup %s", name, get(pod, "securityContext"), spec.uid, spec.gid, spec.gid)
		}
	}
	build := "docker build -f deploy/Dockerfile -t " + image + " ."
	push := "docker push " + image
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for k := range docs {
			if !yield(k) {
				return
			}
		}
	}) {
		if !strings.Contains(docs[name], build) || !strings.Contains(docs[name], push) {
			return fmt.Errorf("%s does not give the commands %q and %q", name, build, push)
		}
	}
	return nil
}

// staticELF reports why the ELF file at path is not a static executable:
// an interpreter (the dynamic loader), a dynamic section or needed shared
// libraries.
func staticELF(path string) error {
	f, err := elf.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	for _, p := range f.Progs {
		switch p.Type {
		case elf.PT_INTERP:
			return fmt.Errorf("%s has a PT_INTERP program header: it needs a dynamic loader", path)
		case elf.PT_DYNAMIC:
			return fmt.Errorf("%s has a PT_DYNAMIC program header: it is dynamically linked", path)
		}
	}
	if s := f.Section(".dynamic"); s != nil {
		return fmt.Errorf("%s has a .dynamic section", path)
	}
	if libs, err := f.ImportedLibraries(); err != nil || len(libs) > 0 {
		return fmt.Errorf("%s needs shared libraries %v (%v)", path, libs, err)
	}
	return nil
}

// readFile reads a file of the repository, relative to this package.
func readFile(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// imageDocs are the files that give the image's build and push commands.
func imageDocs(t *testing.T) map[string]string {
	return map[string]string{
		"deploy/Dockerfile": readFile(t, "Dockerfile"),
		"docs/campaigns.md": readFile(t, filepath.Join("..", "docs", "campaigns.md")),
		"deploy/doc.go":     readFile(t, "doc.go"),
	}
}

// TestImageMatchesManifest checks the committed Dockerfile and that the
// manifest, the README and deploy/doc.go agree with it.
func TestImageMatchesManifest(t *testing.T) {
	spec, err := checkDockerfile(readFile(t, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	if err := checkImageAgreement(readManifest(t), spec, imageDocs(t)); err != nil {
		t.Fatal(err)
	}
}

// TestImageChecksCatch is the checks' canary: each broken Dockerfile,
// manifest or document must be refused.
func TestImageChecksCatch(t *testing.T) {
	dockerfile, manifest := readFile(t, "Dockerfile"), readManifest(t)
	for _, tt := range []struct{ name, old, new string }{
		{"cgo on", "RUN CGO_ENABLED=0 go build", "RUN go build"},
		{"a base with libc", "FROM scratch", "FROM debian:12-slim"},
		{"another package", "-o /out/simrun ./cmd/simrun", "-o /out/simrun ./fuzz/campaign"},
		{"copies another file", "COPY --from=build /out/simrun", "COPY --from=build /out/other"},
		{"no such stage", "COPY --from=build", "COPY --from=builder"},
		{"not on PATH", "ENV PATH=/usr/local/bin", "ENV PATH=/bin"},
		{"root", "USER 65532:65532", "USER 0:0"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if !strings.Contains(dockerfile, tt.old) {
				t.Fatalf("the Dockerfile has no %q to break", tt.old)
			}
			if _, err := checkDockerfile(strings.Replace(dockerfile, tt.old, tt.new, 1)); err == nil {
				t.Fatal("the broken Dockerfile passes the check")
			}
		})
	}
	spec, err := checkDockerfile(dockerfile)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ name, old, new string }{
		{"campaign image differs", "image: mqttlab/simrun:latest", "image: mqttlab/simrun:v2"},
		{"merge image differs", "image: mqttlab/simrun:latest\n          command: [\"simrun\"]\n          args: [\"merge\"", "image: other/simrun:latest\n          command: [\"simrun\"]\n          args: [\"merge\""},
		{"another command", `command: ["simrun"]`, `command: ["/simrun"]`},
		{"another user", "runAsUser: 65532", "runAsUser: 1000"},
		{"another fsGroup", "fsGroup: 65532", "fsGroup: 1000"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if !strings.Contains(manifest, tt.old) {
				t.Fatalf("the manifest has no %q to break", tt.old)
			}
			if err := checkImageAgreement(strings.Replace(manifest, tt.old, tt.new, 1), spec, imageDocs(t)); err == nil {
				t.Fatal("the broken manifest passes the check")
			}
		})
	}
	docs := imageDocs(t)
	docs["docs/campaigns.md"] = strings.ReplaceAll(docs["docs/campaigns.md"], "docker push mqttlab/simrun:latest", "docker push elsewhere/simrun:latest")
	if err := checkImageAgreement(manifest, spec, docs); err == nil || !strings.Contains(err.Error(), "docs/campaigns.md") {
		t.Fatalf("a docs/campaigns.md pushing another image passes: %v", err)
	}
}

// TestBuildStageGivesStaticBinary runs the Dockerfile's build command (its
// environment and go build arguments, -o redirected to a temporary file)
// from the module root and checks the binary is a static executable.
func TestBuildStageGivesStaticBinary(t *testing.T) {
	spec, err := checkDockerfile(readFile(t, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "simrun")
	args := slices.Clone(spec.buildArgs)
	args[slices.Index(args, "-o")+1] = bin
	cmd := exec.Command("go", append([]string{"build"}, args...)...)
	cmd.Dir = ".."
	cmd.Env = append(os.Environ(), spec.buildEnv...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", strings.Join(spec.buildEnv, " "), cmd, err, out)
	}
	if err := staticELF(bin); err != nil {
		t.Fatal(err)
	}
}

// TestStaticELFCatches is staticELF's canary: the system shell is a
// dynamically linked executable.
func TestStaticELFCatches(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Fatal(err)
	}
	if sh, err = filepath.EvalSymlinks(sh); err != nil {
		t.Fatal(err)
	}
	if err := staticELF(sh); err == nil {
		t.Fatalf("%s passes as static", sh)
	}
}
