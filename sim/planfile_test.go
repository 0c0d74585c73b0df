package sim

import (
	"os"
	"testing"
)

// readPlanFile reads and parses a plan of testdata and the world its
// header names, failing the test (naming the file) when either is bad.
func readPlanFile(t *testing.T, name string) (Config, Plan) {
	t.Helper()
	text, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := ParsePlan(string(text))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	cfg, err := ConfigOf(plan.Header)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return cfg, plan
}
