package model

// maxDenseID bounds the packet ids kept in slices indexed by id; larger ids
// (rare: engines allocate the lowest free id) go to maps.
const maxDenseID = 1024

// flights holds one direction's flights by packet id: a flight's kind is
// never 0, so a zero flight is an unused id.
type flights struct {
	low  []flight           // ids below maxDenseID, grown on demand
	high map[uint16]*flight // larger ids
	size int                // how long to make low at first: 1 + the sender's largest id, if known
}

// grow makes low long enough for id (< maxDenseID): at once to size when
// it is first needed, so a direction's table is usually allocated once.
func (fs *flights) grow(id uint16) {
	n := int(id) + 1
	if fs.low == nil && fs.size > n {
		n = min(fs.size, maxDenseID)
	}
	fs.low = append(fs.low, make([]flight, n-len(fs.low))...)
}

// lookup returns the flight of id, or nil.
func (fs *flights) lookup(id uint16) *flight {
	if id < maxDenseID {
		if int(id) < len(fs.low) && fs.low[id].kind != 0 {
			return &fs.low[id]
		}
		return nil
	}
	return fs.high[id]
}

// put makes f the flight of id.
func (fs *flights) put(id uint16, f flight) {
	if id < maxDenseID {
		if int(id) >= len(fs.low) {
			fs.grow(id)
		}
		fs.low[id] = f
		return
	}
	if old := fs.high[id]; old != nil {
		*old = f
		return
	}
	if fs.high == nil {
		fs.high = map[uint16]*flight{}
	}
	n := new(flight)
	*n = f
	fs.high[id] = n
}

// drop forgets id.
func (fs *flights) drop(id uint16) {
	if id < maxDenseID {
		if int(id) < len(fs.low) {
			fs.low[id] = flight{}
		}
		return
	}
	delete(fs.high, id)
}

// dropUnless forgets every flight whose kind is not keep.
func (fs *flights) dropUnless(keep uint8) {
	for id := range fs.low {
		if fs.low[id].kind != keep {
			fs.low[id] = flight{}
		}
	}
	for id, f := range fs.high { // deletions commute: order does not matter
		if f.kind != keep {
			delete(fs.high, id)
		}
	}
}

// reset forgets every flight.
func (fs *flights) reset() {
	clear(fs.low)
	clear(fs.high)
}

// minIDWords is the least length of a grown idSet: ids below 256.
const minIDWords = 4

// idSet is a set of packet ids (a bit set grown on demand).
type idSet []uint64

// has reports whether id is in the set.
func (s idSet) has(id uint16) bool {
	w := int(id >> 6)
	return w < len(s) && s[w]&(1<<(id&63)) != 0
}

// add puts id in the set and reports whether it was new.
func (s *idSet) add(id uint16) bool {
	w := int(id >> 6)
	if w >= len(*s) {
		// At least minIDWords at once: ids are mostly small, and a set
		// grown a word at a time would allocate at every 64 ids.
		*s = append(*s, make([]uint64, max(w+1, minIDWords)-len(*s))...)
	}
	b := uint64(1) << (id & 63)
	added := (*s)[w]&b == 0
	(*s)[w] |= b
	return added
}

// del removes id from the set and reports whether it was there.
func (s idSet) del(id uint16) bool {
	w := int(id >> 6)
	if w >= len(s) || s[w]&(1<<(id&63)) == 0 {
		return false
	}
	s[w] &^= 1 << (id & 63)
	return true
}

// reset empties the set.
func (s idSet) reset() { clear(s) }

// idSteps maps packet ids to steps: a slice for ids below maxDenseID, a map
// for larger ones.
type idSteps struct {
	low  []int32 // id -> step + 1, 0 when unset
	high map[uint16]int
}

// get returns the step of id.
func (m *idSteps) get(id uint16) (int, bool) {
	if id < maxDenseID {
		if int(id) < len(m.low) && m.low[id] != 0 {
			return int(m.low[id] - 1), true
		}
		return 0, false
	}
	step, ok := m.high[id]
	return step, ok
}

// reserve makes room for ids below n (at most maxDenseID) if nothing is
// set yet, so a table whose largest id is known is allocated once.
func (m *idSteps) reserve(n int) {
	if m.low == nil {
		m.low = make([]int32, min(n, maxDenseID))
	}
}

// set maps id to step.
func (m *idSteps) set(id uint16, step int) {
	if id < maxDenseID {
		if int(id) >= len(m.low) {
			m.low = append(m.low, make([]int32, int(id)+1-len(m.low))...)
		}
		m.low[id] = int32(step) + 1
		return
	}
	if m.high == nil {
		m.high = map[uint16]int{}
	}
	m.high[id] = step
}

// del unsets id.
func (m *idSteps) del(id uint16) {
	if id < maxDenseID {
		if int(id) < len(m.low) {
			m.low[id] = 0
		}
		return
	}
	delete(m.high, id)
}

// reset unsets every id.
func (m *idSteps) reset() {
	clear(m.low)
	clear(m.high)
}

// each calls f on every id set: the low ids in order, then the high ones in
// no particular order.
func (m *idSteps) each(f func(id uint16, step int)) {
	for id, v := range m.low {
		if v != 0 {
			f(uint16(id), int(v-1))
		}
	}
	for id, step := range m.high {
		f(id, step)
	}
}
