package properties

import (
	"flag"
	"os"
	"testing"
)

// TestMain bounds rapid's shrinking to 5s per failing property unless
// -rapid.shrinktime says otherwise: every canary fails on purpose and
// shrinks, and the package must stay within its time budget.
func TestMain(m *testing.M) {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) {
		if f.Name == "rapid.shrinktime" {
			set = true
		}
	})
	if _, env := os.LookupEnv("RAPID_SHRINKTIME"); !set && !env {
		if err := flag.Set("rapid.shrinktime", "5s"); err != nil {
			panic(err)
		}
	}
	os.Exit(m.Run())
}
