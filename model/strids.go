package model

// strIDs gives the strings of a names slice dense ids (their positions): an
// open-addressing hash table of ids, probed linearly, that keeps no string
// of its own. For the few hundred message ids of a history it is a few
// kilobytes where a map[string]int32 is a dozen.
type strIDs struct {
	slots []int32 // 1 + an id, 0 when empty; the length is a power of two
	n     int     // ids in the table
}

// newStrIDs returns a table with room for about hint strings, in *buf
// (cleared) if it is long enough.
func newStrIDs(hint int, buf *[]int32) strIDs {
	size := 16
	for 3*size < 4*hint {
		size *= 2
	}
	return strIDs{slots: reuse(buf, size)}
}

// strHash is FNV-1a of s.
func strHash(s string) uint32 {
	h := uint32(2166136261)
	for i := 0; i < len(s); i++ {
		h ^= uint32(s[i])
		h *= 16777619
	}
	return h
}

// id returns the id of s in *names, appending s if it is not there.
func (t *strIDs) id(names *[]string, s string) int32 {
	mask := uint32(len(t.slots) - 1)
	i := strHash(s) & mask
	for {
		v := t.slots[i]
		if v == 0 {
			break
		}
		if (*names)[v-1] == s {
			return v - 1
		}
		i = (i + 1) & mask
	}
	id := int32(len(*names))
	*names = append(*names, s)
	t.slots[i] = id + 1
	if t.n++; 4*t.n > 3*len(t.slots) { // at most three quarters full
		t.grow(*names)
	}
	return id
}

// grow doubles the table and puts every id back.
func (t *strIDs) grow(names []string) {
	t.slots = make([]int32, 2*len(t.slots))
	mask := uint32(len(t.slots) - 1)
	for id, s := range names[:t.n] {
		i := strHash(s) & mask
		for t.slots[i] != 0 {
			i = (i + 1) & mask
		}
		t.slots[i] = int32(id) + 1
	}
}
