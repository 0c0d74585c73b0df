package model

import "sort"

// sortStrings sorts s in place.
func sortStrings(s []string) { sort.Strings(s) }
