package fuzz

import (
	"errors"
	"reflect"
	"testing"

	"github.com/mqttlab/mqttlab/sim"
)

// FuzzParsePlan: any text either is refused with sim.ErrPlan (never a
// panic) or parses to a plan whose text parses back to the same plan (the
// header's faults and policy lines included). Its seed corpus is in
// testdata/fuzz/FuzzParsePlan.
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
	})
}
