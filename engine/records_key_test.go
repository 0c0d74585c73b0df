package engine

import "testing"

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
