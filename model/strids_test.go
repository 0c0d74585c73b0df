package model

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestStrIDsLikeAMap proves strIDs gives every string the id a map from
// first appearance would, through many growths and with colliding,
// empty and repeated strings.
func TestStrIDsLikeAMap(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for run := range 50 {
		hint := r.IntN(40)
		tab, names := newStrIDs(hint, new([]int32)), []string(nil)
		want := map[string]int32{}
		for range 1 + r.IntN(3000) {
			s := fmt.Sprintf("m%d", r.IntN(1+run*40))
			if r.IntN(50) == 0 {
				s = ""
			}
			id, ok := want[s]
			if !ok {
				id = int32(len(want))
				want[s] = id
			}
			if got := tab.id(&names, s); got != id {
				t.Fatalf("run %d: id(%q) = %d, want %d", run, s, got, id)
			}
		}
		if len(names) != len(want) || tab.n != len(want) {
			t.Fatalf("run %d: %d names, %d in table, want %d", run, len(names), tab.n, len(want))
		}
		for s, id := range want {
			if names[id] != s {
				t.Fatalf("run %d: names[%d] = %q, want %q", run, id, names[id], s)
			}
		}
		if 4*tab.n > 3*len(tab.slots) {
			t.Fatalf("run %d: %d ids in %d slots: more than three quarters full", run, tab.n, len(tab.slots))
		}
	}
}
