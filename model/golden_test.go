package model

import (
	"bufio"
	"flag"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
)

var updateVerdicts = flag.Bool("update-verdicts", false, "rewrite testdata/verdicts.golden from the current model")

// goldenVerdicts is the file of TestGoldenVerdicts.
const goldenVerdicts = "testdata/verdicts.golden"

// verdictHistories draws the histories of TestGoldenVerdicts: wide random
// histories of every shape, mostly packet flows, some with large ids.
func verdictHistories() []History {
	r := rand.New(rand.NewPCG(31, 32))
	var hs []History
	for run := range 240 {
		maxID := uint16(5)
		if run%6 == 0 {
			maxID = 3 * maxDenseID
		}
		hs = append(hs, wideHistory(r, 1+r.IntN(400), 1+r.IntN(25), 1+r.IntN(50), maxID, run%3 != 0))
	}
	return hs
}

// verdictDigest is the FNV-64a of everything the model says of h: every
// violation, the faults, and what the fixed and the weakest policy promise.
func verdictDigest(h History) string {
	f := fnv.New64a()
	fmt.Fprintf(f, "%v\n%+v\n%v\n%v\n", Check(h, Options{}), FaultsOf(h),
		CheckPromised(h, FixedPolicy()), CheckPromised(h, Policy{}))
	return fmt.Sprintf("%016x", f.Sum64())
}

// TestGoldenVerdicts holds the model to the verdicts it gave when the file
// was written (by the model before its cost work, commit f0ea5bf): a
// change meant to make the checks cheaper must not change one of them.
// Rewrite it with -update-verdicts only for a change of the spec.
func TestGoldenVerdicts(t *testing.T) {
	hs := verdictHistories()
	got := make([]string, len(hs))
	for i, h := range hs {
		got[i] = fmt.Sprintf("%d %d %s", i, len(h.Events), verdictDigest(h))
	}
	if *updateVerdicts {
		head := "# run events FNV-64a of Check, FaultsOf and CheckPromised (fixed, weakest) of verdictHistories (go test ./model -run TestGoldenVerdicts -update-verdicts)\n"
		if err := os.WriteFile(goldenVerdicts, []byte(head+strings.Join(got, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	f, err := os.Open(goldenVerdicts)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var want []string
	for sc := bufio.NewScanner(f); sc.Scan(); {
		if line := sc.Text(); line != "" && !strings.HasPrefix(line, "#") {
			want = append(want, line)
		}
	}
	if len(want) != len(got) {
		t.Fatalf("%d golden verdicts, %d histories", len(want), len(got))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("history %s, golden %s", got[i], want[i])
		}
	}
}
