package sim

import (
	"testing"

	"github.com/mqttlab/mqttlab/engine"
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
