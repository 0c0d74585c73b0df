package main

import "testing"

// TestSeedRuns: missing or repeated seeds print as compact runs.
func TestSeedRuns(t *testing.T) {
	cases := []struct {
		seeds []uint64
		want  string
	}{
		{nil, ""},
		{[]uint64{7}, "7"},
		{[]uint64{3, 4}, "3..4"},
		{[]uint64{3, 9}, "3, 9"},
		{[]uint64{5, 1, 2, 3, 3}, "1..3, 5"},
		{[]uint64{1824, 1826, 1828, 1830}, "1824..1830 step 2"},
		{[]uint64{0, 1, 2, 10, 20, 30, 31}, "0..2, 10..30 step 10, 31"},
		{[]uint64{1, 3, 6, 10, 15, 21, 28, 36, 45, 55, 66}, "1, 3, 6, 10, 15, 21, 28, 36, and 3 more"},
	}
	for _, c := range cases {
		if got := seedRuns(c.seeds); got != c.want {
			t.Errorf("seedRuns(%v) = %q, want %q", c.seeds, got, c.want)
		}
	}
}
