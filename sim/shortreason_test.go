package sim

import "testing"

func TestShortReason(t *testing.T) {
	cases := []struct{ in, want string }{
		{"", ""},
		{"p1 down", "p1 down"},
		{"undelivered s1<-m1 s1<-m2", "undelivered s1<-m1 s1<-m2"},
		{"undelivered s1<-m1 s1<-m2 s1<-m3 s1<-m4", "undelivered s1<-m1 s1<-m2 ... (+2 more, 4 in all)"},
		{"s1 engine busy; s1 client-in ids 1 2 3; undelivered s1<-m1 s1<-m2 s2<-m1",
			"s1 engine busy; s1 client-in ids 1 2 ... (+1 more, 3 in all); undelivered s1<-m1 s1<-m2 ... (+1 more, 3 in all)"},
		{"stuck after the liveness bound: undelivered a<-1 a<-2 a<-3", "stuck after the liveness bound: undelivered a<-1 a<-2 ... (+1 more, 3 in all)"},
	}
	for _, c := range cases {
		if got := ShortReason(c.in, 2); got != c.want {
			t.Errorf("ShortReason(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
