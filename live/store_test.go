package live

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mqttlab/mqttlab/engine"
	"pgregory.net/rapid"
)

func mustOpen(t *testing.T, dir string) *Store {
	t.Helper()
	s, err := OpenStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func mustApply(t *testing.T, s *Store, p engine.Persist) {
	t.Helper()
	if err := s.Apply(p); err != nil {
		t.Fatalf("apply %+v: %v", p, err)
	}
}

func TestStoreRoundTrip(t *testing.T) {
	dir := t.TempDir()
	s := mustOpen(t, dir)
	puts := []engine.Persist{
		{Op: engine.Put, Key: "out/0001", Value: []byte("publish one"), Sync: true},
		{Op: engine.Put, Key: "Sess/ABC", Value: []byte{0, 1, 2, 255}},
		{Op: engine.Put, Key: "", Value: nil, Sync: true},
		{Op: engine.Put, Key: "../../etc/passwd", Value: []byte("x")},
		{Op: engine.Put, Key: "a%2Fb", Value: []byte("literal percent")},
		{Op: engine.Put, Key: "a/b", Value: []byte("slash")},
		{Op: engine.Put, Key: "out/0001", Value: []byte("publish one, overwritten"), Sync: true},
	}
	for _, p := range puts {
		mustApply(t, s, p)
	}
	want := []engine.Record{
		{Key: "", Value: []byte{}},
		{Key: "../../etc/passwd", Value: []byte("x")},
		{Key: "Sess/ABC", Value: []byte{0, 1, 2, 255}},
		{Key: "a%2Fb", Value: []byte("literal percent")},
		{Key: "a/b", Value: []byte("slash")},
		{Key: "out/0001", Value: []byte("publish one, overwritten")},
	}
	// A second store on the same dir (a reboot) reads the same records.
	got, err := mustOpen(t, dir).Records()
	if err != nil {
		t.Fatal(err)
	}
	if !recordsEqual(got, want) {
		t.Fatalf("records\n got %q\nwant %q", got, want)
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if e.IsDir() || strings.ContainsAny(e.Name(), "/.") {
			t.Errorf("unsafe file name %q", e.Name())
		}
	}
}

func recordsEqual(a, b []engine.Record) bool {
	return slices.EqualFunc(a, b, func(x, y engine.Record) bool { return x.Key == y.Key && bytes.Equal(x.Value, y.Value) })
}

func TestStoreDelete(t *testing.T) {
	s := mustOpen(t, t.TempDir())
	mustApply(t, s, engine.Persist{Op: engine.Put, Key: "k1", Value: []byte("1"), Sync: true})
	mustApply(t, s, engine.Persist{Op: engine.Put, Key: "k2", Value: []byte("2"), Sync: true})
	mustApply(t, s, engine.Persist{Op: engine.Delete, Key: "k1", Sync: true})
	mustApply(t, s, engine.Persist{Op: engine.Delete, Key: "never-there"})
	got, err := s.Records()
	if err != nil {
		t.Fatal(err)
	}
	if want := []engine.Record{{Key: "k2", Value: []byte("2")}}; !recordsEqual(got, want) {
		t.Fatalf("after delete %q, want %q", got, want)
	}
}

func TestStoreCorruptRecordReported(t *testing.T) {
	cases := []struct {
		name   string
		damage func(data []byte) []byte
		why    string
	}{
		{"truncated value", func(d []byte) []byte { return d[:len(d)-1] }, "header says"},
		{"extra byte", func(d []byte) []byte { return append(d, 0) }, "header says"},
		{"flipped value bit", func(d []byte) []byte { d[len(d)-1] ^= 1; return d }, "checksum"},
		{"flipped checksum", func(d []byte) []byte { d[12] ^= 0x80; return d }, "checksum"},
		{"bad magic", func(d []byte) []byte { d[0] = 'X'; return d }, "magic"},
		{"short header", func(d []byte) []byte { return d[:7] }, "shorter than"},
		{"empty file", func(d []byte) []byte { return nil }, "shorter than"},
		{"huge key length", func(d []byte) []byte { d[4] = 0xFF; return d }, "header says"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			s := mustOpen(t, dir)
			mustApply(t, s, engine.Persist{Op: engine.Put, Key: "good", Value: []byte("fine"), Sync: true})
			mustApply(t, s, engine.Persist{Op: engine.Put, Key: "bad", Value: []byte("damaged soon"), Sync: true})
			path := filepath.Join(dir, "r-bad")
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, c.damage(data), 0o644); err != nil {
				t.Fatal(err)
			}
			got, err := s.Records()
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), c.why) {
				t.Fatalf("err = %v, want ErrCorrupt naming %s and %q", err, path, c.why)
			}
			if want := []engine.Record{{Key: "good", Value: []byte("fine")}}; !recordsEqual(got, want) {
				t.Fatalf("intact records %q, want %q", got, want)
			}
		})
	}
}

func TestStoreMisplacedAndForeignFiles(t *testing.T) {
	dir := t.TempDir()
	s := mustOpen(t, dir)
	mustApply(t, s, engine.Persist{Op: engine.Put, Key: "k", Value: []byte("v"), Sync: true})
	if err := os.Rename(filepath.Join(dir, "r-k"), filepath.Join(dir, "r-other")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("hi"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := s.Records()
	for _, name := range []string{"r-other", "notes.txt"} {
		if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), name) {
			t.Errorf("err = %v, want ErrCorrupt naming %s", err, name)
		}
	}
}

func TestStoreStaleTempRemoved(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, tempPrefix+"123"), []byte("half a put"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := mustOpen(t, dir)
	got, err := s.Records()
	if err != nil || len(got) != 0 {
		t.Fatalf("records %q, err %v; want none", got, err)
	}
	if _, err := os.Stat(filepath.Join(dir, tempPrefix+"123")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("stale temp file still there: %v", err)
	}
}

func TestStoreBadInput(t *testing.T) {
	s := mustOpen(t, t.TempDir())
	if err := s.Apply(engine.Persist{Op: 0, Key: "k"}); !errors.Is(err, ErrBadPersist) {
		t.Errorf("op 0: err = %v, want ErrBadPersist", err)
	}
	if err := s.Apply(engine.Persist{Op: engine.Put, Key: strings.Repeat("X", 100)}); !errors.Is(err, ErrBadKey) {
		t.Errorf("long key: err = %v, want ErrBadKey", err)
	}
}

// TestFileNameInjective: distinct keys never share a file name, and names
// hold only safe characters.
func TestFileNameInjective(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		// 60 bytes encode to at most 2+180 bytes, under maxNameLen.
		a := rapid.StringN(0, -1, 60).Draw(t, "a")
		b := rapid.StringN(0, -1, 60).Draw(t, "b")
		na, erra := fileName(a)
		nb, errb := fileName(b)
		if erra != nil || errb != nil {
			t.Fatalf("short keys refused: %v, %v", erra, errb)
		}
		if a != b && na == nb {
			t.Fatalf("keys %q and %q share file name %q", a, b, na)
		}
		for _, c := range []byte(na) {
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '%' || c >= 'A' && c <= 'F') {
				t.Fatalf("unsafe byte %q in %q", c, na)
			}
		}
	})
}
