package sim

import (
	"maps"
	"slices"
	"testing"

	"github.com/mqttlab/mqttlab/engine"
	"pgregory.net/rapid"
)

func put(k, v string, sync bool) engine.Persist {
	return engine.Persist{Op: engine.Put, Key: k, Value: []byte(v), Sync: sync}
}

func records(d *Disk) map[string]string {
	m := map[string]string{}
	for _, r := range d.Records() {
		m[r.Key] = string(r.Value)
	}
	return m
}

func TestDiskCrashLosesUnsyncedKeepsSynced(t *testing.T) {
	d := NewDisk()
	d.Persist(put("a", "1", false))
	d.Persist(put("b", "2", true)) // syncs a and b
	d.Persist(put("c", "3", false))
	d.Persist(engine.Persist{Op: engine.Delete, Key: "a"})
	out := d.Crash(NewRand(maxSource{}), 1_000_000, 0)
	got := records(d)
	if len(got) != 2 || got["a"] != "1" || got["b"] != "2" {
		t.Errorf("after a crash losing every unsynced write: %v; want a=1 b=2", got)
	}
	if out.Lost != 2 || out.Kept != 0 {
		t.Errorf("outcome %+v; want 2 lost", out)
	}
}

func TestDiskCrashWithZeroDrawKeepsEverything(t *testing.T) {
	d := NewDisk()
	d.Persist(put("a", "1", false))
	d.Persist(put("b", "2", false))
	d.Persist(engine.Persist{Op: engine.Delete, Key: "a"})
	out := d.Crash(NewRand(zeroSource{}), 500_000, 500_000)
	got := records(d)
	if len(got) != 1 || got["b"] != "2" || out.Kept != 3 || out.Torn {
		t.Errorf("zero draws: records %v outcome %+v; want only b=2, all kept", got, out)
	}
}

func TestDiskTornLastWriteDropped(t *testing.T) {
	d := NewDisk()
	d.Persist(put("a", "1", false))
	d.Persist(put("b", "2", false))
	out := d.Crash(NewRand(zeroSource{}), 500_000, 1_000_000) // torn is certain; a zero keep draw
	got := records(d)
	if !out.Torn || got["b"] != "" || got["a"] != "1" {
		t.Errorf("torn crash: records %v outcome %+v; want a kept, b torn", got, out)
	}
}

func TestDiskCopiesValues(t *testing.T) {
	d := NewDisk()
	v := []byte("x")
	d.Persist(engine.Persist{Op: engine.Put, Key: "k", Value: v, Sync: true})
	v[0] = 'y'
	if got := records(d)["k"]; got != "x" {
		t.Errorf("record changed with the caller's buffer: %q", got)
	}
}

func TestDiskRecordsSortedAndDrop(t *testing.T) {
	d := NewDisk()
	for _, k := range []string{"in/00002", "out/00001", "in/00001", "session"} {
		d.Persist(put(k, "v", true))
	}
	if n := d.Drop(isIncomingQoS2Key); n != 2 {
		t.Errorf("dropped %d in/ records, want 2", n)
	}
	recs := d.Records()
	if len(recs) != 2 || recs[0].Key != "out/00001" || recs[1].Key != "session" {
		t.Errorf("records %v; want out/00001, session in order", recs)
	}
}

// TestDiskMatchesMapModel: under any sequence of puts, deletes, syncs and
// crashes that lose no write, Records lists the durable state a map would
// hold (last write of each key wins, deletes remove), sorted by key, and
// Drop removes exactly the records it selects.
func TestDiskMatchesMapModel(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		d := NewDisk()
		durable := map[string]string{}
		var pending []engine.Persist
		apply := func(p engine.Persist) {
			if p.Op == engine.Put {
				durable[p.Key] = string(p.Value)
			} else {
				delete(durable, p.Key)
			}
		}
		key := rapid.SampledFrom([]string{"a", "b", "in/1", "in/2", "out/1", "session", "z"})
		n := rapid.IntRange(1, 60).Draw(rt, "ops")
		for i := 0; i < n; i++ {
			var p engine.Persist
			switch rapid.IntRange(0, 5).Draw(rt, "kind") {
			case 0, 1, 2:
				p = put(key.Draw(rt, "key"), rapid.StringN(0, 3, -1).Draw(rt, "value"), rapid.Bool().Draw(rt, "sync"))
			case 3:
				p = engine.Persist{Op: engine.Delete, Key: key.Draw(rt, "key"), Sync: rapid.Bool().Draw(rt, "sync")}
			case 4:
				d.Crash(NewRand(zeroSource{}), 0, 0) // keeps every pending write
				for _, q := range pending {
					apply(q)
				}
				pending = pending[:0]
				continue
			case 5:
				want := 0
				for k := range durable {
					if isIncomingQoS2Key(k) {
						delete(durable, k)
						want++
					}
				}
				if got := d.Drop(isIncomingQoS2Key); got != want {
					rt.Fatalf("Drop removed %d records, want %d", got, want)
				}
				pending = pending[:0]
				continue
			}
			d.Persist(p)
			pending = append(pending, p)
			if p.Sync {
				for _, q := range pending {
					apply(q)
				}
				pending = pending[:0]
			}
			if d.Pending() != len(pending) {
				rt.Fatalf("%d pending writes, want %d", d.Pending(), len(pending))
			}
		}
		recs := d.Records()
		keys := slices.Sorted(maps.Keys(durable))
		if len(recs) != len(keys) {
			rt.Fatalf("records %v; want %v", recs, durable)
		}
		for i, k := range keys {
			if recs[i].Key != k || string(recs[i].Value) != durable[k] {
				rt.Fatalf("record %d is %s=%q; want %s=%q (all: %v)", i, recs[i].Key, recs[i].Value, k, durable[k], recs)
			}
		}
	})
}
