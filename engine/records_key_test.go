package engine

import (
	"strings"
	"testing"
)

// TestClientRecordKey: keys of tabled and built ids are the same text, the
// prefix and the id zero-padded to five digits.
func TestClientRecordKey(t *testing.T) {
	tests := []struct {
		prefix string
		id     uint16
		want   string
	}{
		{clientPrefixOut, 0, "out/00000"},
		{clientPrefixOut, 1, "out/00001"},
		{clientPrefixIn, 7, "in/00007"},
		{clientPrefixOut, clientKeyTabled - 1, "out/01023"},
		{clientPrefixIn, clientKeyTabled - 1, "in/01023"},
		{clientPrefixOut, clientKeyTabled, "out/01024"},
		{clientPrefixIn, 65535, "in/65535"},
	}
	for _, tt := range tests {
		if got := clientRecordKey(tt.prefix, tt.id); got != tt.want {
			t.Errorf("clientRecordKey(%q, %d) = %q, want %q", tt.prefix, tt.id, got, tt.want)
		}
	}
	for id := range uint16(2 * clientKeyTabled) {
		if got, want := clientOutKey(id), clientRecordKeyBuilt(clientPrefixOut, id); got != want {
			t.Fatalf("clientOutKey(%d) = %q, want %q", id, got, want)
		}
		if got, want := clientInKey(id), clientRecordKeyBuilt(clientPrefixIn, id); got != want {
			t.Fatalf("clientInKey(%d) = %q, want %q", id, got, want)
		}
	}
}

// TestClientRecordKeyNoAlloc: a small id's key costs no allocation.
func TestClientRecordKeyNoAlloc(t *testing.T) {
	var out, in string
	if n := testing.AllocsPerRun(100, func() { out, in = clientOutKey(17), clientInKey(900) }); n != 0 {
		t.Errorf("key of a small id: %v allocs, want 0", n)
	}
	if out != "out/00017" || in != "in/00900" {
		t.Errorf("keys %q %q", out, in)
	}
}

// TestClientSharedDelete checks that the shared Delete of a tabled key is
// the Persist a client would box, and that other keys get none.
func TestClientSharedDelete(t *testing.T) {
	for _, id := range []uint16{0, 1, 7, 255, clientKeyTabled - 1} {
		for _, key := range []string{clientOutKey(id), clientInKey(id)} {
			a := clientSharedDelete(key)
			want := Persist{Op: Delete, Key: key, Sync: true}
			if got, ok := a.(Persist); !ok || got.Op != want.Op || got.Key != want.Key || got.Sync != want.Sync || got.Value != nil {
				t.Fatalf("shared delete of %q = %#v, want %#v", key, a, want)
			}
			if copied := strings.Clone(key); clientSharedDelete(copied) != nil {
				t.Fatalf("a copy of %q got a shared delete", key)
			}
		}
	}
	for _, key := range []string{clientOutKey(clientKeyTabled), clientKeySession, clientKeyTableOut[1:10], ""} {
		if a := clientSharedDelete(key); a != nil {
			t.Fatalf("key %q got shared delete %#v", key, a)
		}
	}
}
