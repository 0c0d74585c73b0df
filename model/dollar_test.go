package model

import "testing"

// TestDollarWildcard: the filters that would match a $ topic but for the
// $ rule are the ones starting with a wildcard; none for other topics.
func TestDollarWildcard(t *testing.T) {
	subs := map[string]*routeSub{"#": {}, "+/a": {}, "$d/#": {}, "t/#": {}, "+/c/x": {}}
	for _, c := range []struct{ topic, want string }{
		{"$d/a", "#"}, {"$d/c/x", "#"}, {"t/a", ""}, {"$d/b", "#"},
	} {
		if got := dollarWildcard(subs, c.topic); got != c.want {
			t.Errorf("dollarWildcard(%q) = %q, want %q", c.topic, got, c.want)
		}
	}
	if got := dollarWildcard(map[string]*routeSub{"+/a": {}, "$d/#": {}}, "$d/a"); got != "+/a" {
		t.Errorf("dollarWildcard($d/a) = %q, want +/a", got)
	}
	if got := dollarWildcard(map[string]*routeSub{"+/a": {}}, "$d/c/x"); got != "" {
		t.Errorf("dollarWildcard($d/c/x) = %q, want none", got)
	}
}
