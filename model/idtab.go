package model

// maxDenseID bounds the packet ids kept in slices indexed by id; larger ids
// (rare: engines allocate the lowest free id) go to maps.
const maxDenseID = 1024

// flights holds one direction's flights by packet id: a flight's kind is
// never 0, so a zero flight is an unused id.
type flights struct {
	low  []flight           // ids below maxDenseID, grown on demand
	high map[uint16]*flight // larger ids
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
			fs.low = append(fs.low, make([]flight, int(id)+1-len(fs.low))...)
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

// idSet is a set of packet ids (a bit set grown on demand).
type idSet []uint64

// has reports whether id is in the set.
func (s idSet) has(id uint16) bool {
	w := int(id >> 6)
	return w < len(s) && s[w]&(1<<(id&63)) != 0
}

// add puts id in the set.
func (s *idSet) add(id uint16) {
	w := int(id >> 6)
	if w >= len(*s) {
		*s = append(*s, make([]uint64, w+1-len(*s))...)
	}
	(*s)[w] |= 1 << (id & 63)
}

// reset empties the set.
func (s idSet) reset() { clear(s) }
