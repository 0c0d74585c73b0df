package sim

import "testing"

// TestCarverPiecesDoNotOverlap: slices handed out have exactly the room
// asked, start empty, and filling (or outgrowing) one never touches another.
func TestCarverPiecesDoNotOverlap(t *testing.T) {
	var c carver[int]
	var got [][]int
	for i, n := range []int{1, 4, 4, 3, 300, 2, 4, 4, 4, 4, 4, 4} {
		s := c.slice(n)
		if len(s) != 0 || cap(s) != n {
			t.Fatalf("slice(%d) #%d: len %d cap %d", n, i, len(s), cap(s))
		}
		for j := 0; j < n+1; j++ { // one more than the room: grows
			s = append(s, i)
		}
		got = append(got, s)
	}
	for i, s := range got {
		for j, v := range s {
			if v != i {
				t.Fatalf("piece %d [%d] = %d: overwritten by piece %d", i, j, v, v)
			}
		}
	}
}

// TestCarverOneIsFresh: one hands out distinct zero values.
func TestCarverOneIsFresh(t *testing.T) {
	var c carver[conn]
	a, b := c.one(), c.one()
	if a == b {
		t.Fatal("one returned the same conn twice")
	}
	a.id = 7
	if b.id != 0 {
		t.Fatalf("writing one conn changed another: id %d", b.id)
	}
}

// TestArenaStr: str copies, so later changes to the source do not show.
func TestArenaStr(t *testing.T) {
	var a byteArena
	src := []byte("log/12")
	s := a.str(src)
	src[0] = 'X'
	if s != "log/12" {
		t.Fatalf("str = %q, want log/12", s)
	}
}

// TestCompactPktsKeepsOrder: dropping marks a few at a time (the compaction
// moves the rest down) leaves exactly the marks past end, in order.
func TestCompactPktsKeepsOrder(t *testing.T) {
	var s stream
	for i := uint64(1); i <= 40; i++ {
		s.pkts = append(s.pkts, pktMark{end: 10 * i})
	}
	for end := uint64(0); end <= 400; end += 30 {
		s.dropPkts(end)
		left := s.pkts[s.pktHead:]
		for i, m := range left {
			if want := (end/10 + 1 + uint64(i)) * 10; m.end != want {
				t.Fatalf("after dropping to %d: mark %d ends at %d, want %d", end, i, m.end, want)
			}
		}
		if want := 40 - int(min(end/10, 40)); len(left) != want {
			t.Fatalf("after dropping to %d: %d marks left, want %d", end, len(left), want)
		}
	}
}
