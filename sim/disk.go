package sim

import (
	"slices"
	"strings"

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
//
// The durable records are a slice sorted by key, not a map: a node holds a
// few dozen keys at a time but the broker puts and deletes hundreds per
// seed, and a map grew (and rehashed) under that churn; the slice also hands
// Records its key order without a sort.
type Disk struct {
	synced  []diskRec // sorted by key, keys unique
	pending []engine.Persist
	values  *byteArena // the copies of written values, never reused
}

// NewDisk returns an empty disk.
func NewDisk() *Disk { return newDiskIn(new(byteArena), nil) }

// newDiskIn returns an empty disk that copies values into arena, which may
// be shared (a world's disks share one: fewer, fuller blocks), keeping its
// first records in room (its length is the room; a world carves its disks'
// rooms from one block).
func newDiskIn(arena *byteArena, room []diskRec) *Disk {
	return &Disk{synced: room[:0:len(room)], values: arena}
}

// diskRec is one durable record.
type diskRec struct {
	key   string
	value []byte
}

// find returns where key is, or would be inserted, in d.synced.
func (d *Disk) find(key string) (int, bool) {
	return slices.BinarySearchFunc(d.synced, key, func(r diskRec, k string) int { return strings.Compare(r.key, k) })
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
	i, ok := d.find(p.Key)
	switch {
	case p.Op == engine.Put && ok:
		d.synced[i].value = p.Value
	case p.Op == engine.Put:
		d.synced = slices.Insert(d.synced, i, diskRec{key: p.Key, value: p.Value})
	case p.Op == engine.Delete && ok:
		d.synced = slices.Delete(d.synced, i, i+1)
	}
}

// get returns the durable value of key.
func (d *Disk) get(key string) ([]byte, bool) {
	if i, ok := d.find(key); ok {
		return d.synced[i].value, true
	}
	return nil, false
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
	recs := make([]engine.Record, len(d.synced))
	for i, r := range d.synced {
		recs[i] = engine.Record{Key: r.key, Value: r.value}
	}
	return recs
}

// Drop deletes every durable record whose key satisfies lose (a fault that
// loses part of the state, e.g. the incoming QoS2 records). It reports how
// many went. Pending writes are dropped too.
func (d *Disk) Drop(lose func(key string) bool) int {
	n := len(d.synced)
	d.synced = slices.DeleteFunc(d.synced, func(r diskRec) bool { return lose(r.key) })
	n -= len(d.synced)
	clear(d.pending)
	d.pending = d.pending[:0]
	return n
}
