package fuzz

import (
	"errors"
	"reflect"
	"testing"

	"github.com/mqttlab/mqttlab/sim"
)

// FuzzParsePlan: any text either is refused with sim.ErrPlan (never a
// panic) or parses to a plan whose text parses back to the same plan (the
// header's faults and policy lines included); a printed plan of the current
// format cut at any line boundary before its end line is refused with
// sim.ErrPlanNotWhole. Its seed corpus is in testdata/fuzz/FuzzParsePlan.
func FuzzParsePlan(f *testing.F) {
	f.Fuzz(func(t *testing.T, text string) {
		p, err := sim.ParsePlan(text)
		if err != nil {
			if !errors.Is(err, sim.ErrPlan) {
				t.Fatalf("error %v does not wrap ErrPlan", err)
			}
			return
		}
		back, err := sim.ParsePlan(p.String())
		if err != nil {
			t.Fatalf("printed plan does not parse: %v\n%s", err, p)
		}
		if !reflect.DeepEqual(back, p) {
			t.Fatalf("printed plan parses to another plan:\n%s\nvs\n%s", p, back)
		}
		if p.Header.Format == sim.PlanFormat {
			checkCuts(t, p.String())
		}
	})
}

// checkCuts fails unless every cut of a printed plan at a line boundary
// before its end line is refused as not whole.
func checkCuts(t *testing.T, text string) {
	for i := 0; i < len(text)-1; i++ {
		if text[i] != '\n' {
			continue
		}
		if _, err := sim.ParsePlan(text[:i+1]); !errors.Is(err, sim.ErrPlanNotWhole) {
			t.Fatalf("the plan cut after %d bytes: error %v, want ErrPlanNotWhole\n%s", i+1, err, text[:i+1])
		}
	}
}
