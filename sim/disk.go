package sim

import (
	"slices"

	"github.com/mqttlab/mqttlab/engine"
)

// Disk is one node's durable store of engine records. A Persist without Sync
// is pending: a crash keeps every synced write and a random part of the
// pending ones, in order. A synced Persist makes itself and every earlier
// pending write durable.
//
// Torn writes: the disk models a checksummed log, so a write torn by a crash
// fails its checksum at restart and is dropped, never handed back corrupt.
// Only the last pending write can be torn (the one in progress when the power
// went); a torn write is therefore a lost write the crash was sure to take,
// whatever the keep draw said. The engine never sees a corrupt record from
// the sim.
type Disk struct {
	synced  map[string][]byte
	pending []engine.Persist
	values  *byteArena // the copies of written values, never reused
}

// NewDisk returns an empty disk.
func NewDisk() *Disk { return newDiskIn(new(byteArena), 0) }

// newDiskIn returns an empty disk that copies values into arena, which may
// be shared (a world's disks share one: fewer, fuller blocks), with room
// for size records before its map first grows. The broker puts and deletes
// hundreds of keys per seed over a few dozen live ones; a map sized up front
// skips the growths from empty. (A slice sorted by key, tried instead, cost
// more CPU: moving its pointerful records runs the GC's write barriers.)
func newDiskIn(arena *byteArena, size int) *Disk {
	return &Disk{synced: make(map[string][]byte, size), values: arena}
}

// Persist carries out one Persist action. It copies the value.
func (d *Disk) Persist(p engine.Persist) {
	if p.Op == engine.Put {
		p.Value = d.values.clone(p.Value)
	}
	if p.Sync && len(d.pending) == 0 {
		d.apply(p) // what Sync would do, without the round trip through pending
		return
	}
	d.pending = append(d.pending, p)
	if p.Sync {
		d.Sync()
	}
}

// Sync makes every pending write durable.
func (d *Disk) Sync() {
	for _, p := range d.pending {
		d.apply(p)
	}
	clear(d.pending)
	d.pending = d.pending[:0]
}

func (d *Disk) apply(p engine.Persist) {
	switch p.Op {
	case engine.Put:
		d.synced[p.Key] = p.Value
	case engine.Delete:
		delete(d.synced, p.Key)
	}
}

// get returns the durable value of key.
func (d *Disk) get(key string) ([]byte, bool) {
	v, ok := d.synced[key]
	return v, ok
}

// Pending reports how many writes are not yet durable.
func (d *Disk) Pending() int { return len(d.pending) }

// CrashOutcome says what a crash did to a disk.
type CrashOutcome struct {
	Kept, Lost int  // pending writes that survived / were lost
	Torn       bool // the last pending write was torn (and dropped)
}

// Crash loses power: each pending write survives unless the draw
// r.PPM(losePPM) says it is lost (a zero draw keeps it); with r.PPM(tornPPM)
// the last pending write is torn and dropped.
func (d *Disk) Crash(r *Rand, losePPM, tornPPM int) CrashOutcome {
	var out CrashOutcome
	n := len(d.pending)
	if n > 0 && r.PPM(tornPPM) {
		out.Torn = true
		n--
	}
	for _, p := range d.pending[:n] {
		if r.PPM(losePPM) {
			out.Lost++
			continue
		}
		out.Kept++
		d.apply(p)
	}
	if out.Torn {
		out.Lost++
	}
	clear(d.pending)
	d.pending = d.pending[:0]
	return out
}

// Records returns the durable records in key order (the restart view).
func (d *Disk) Records() []engine.Record {
	keys := d.sortedKeys()
	recs := make([]engine.Record, len(keys))
	for i, k := range keys {
		recs[i] = engine.Record{Key: k, Value: d.synced[k]}
	}
	return recs
}

// Drop deletes every durable record whose key satisfies lose (a fault that
// loses part of the state, e.g. the incoming QoS2 records). It reports how
// many went. Pending writes are dropped too.
func (d *Disk) Drop(lose func(key string) bool) int {
	n := 0
	for _, k := range d.sortedKeys() {
		if lose(k) {
			delete(d.synced, k)
			n++
		}
	}
	clear(d.pending)
	d.pending = d.pending[:0]
	return n
}

func (d *Disk) sortedKeys() []string {
	keys := make([]string, 0, len(d.synced))
	for k := range d.synced {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
