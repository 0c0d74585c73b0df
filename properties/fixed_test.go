package properties

import (
	"testing"

	"pgregory.net/rapid"
)

// TestFixedNoPromisedViolation: the fixed preset, under every fault profile,
// with plan-level faults and an exhaustive crash point, never breaks one of
// its promises.
func TestFixedNoPromisedViolation(t *testing.T) {
	for _, prof := range DefaultProfiles {
		t.Run(prof, func(t *testing.T) {
			rapid.Check(t, FixedProperty(prof))
		})
	}
}
