package sim

import (
	"testing"

	"github.com/mqttlab/mqttlab/engine"
)

// TestEventSlotBoxes: a boxed event type-switches and asserts as its type
// with its value, as a plainly boxed one does, and boxing allocates nothing
// after the first.
func TestEventSlotBoxes(t *testing.T) {
	var s eventSlot[engine.BytesReceived]
	data := []byte("abc")
	for i, conn := range []engine.ConnID{3, 9} {
		ev := s.box(engine.BytesReceived{Conn: conn, Data: data})
		switch e := ev.(type) {
		case engine.BytesReceived:
			if e.Conn != conn || string(e.Data) != "abc" {
				t.Fatalf("box %d: got %+v", i, e)
			}
		default:
			t.Fatalf("box %d: type %T, want engine.BytesReceived", i, ev)
		}
		if _, ok := ev.(engine.Ack); ok {
			t.Fatalf("box %d asserts as engine.Ack", i)
		}
	}
	var sink engine.Event
	if n := testing.AllocsPerRun(100, func() { sink = s.box(engine.BytesReceived{Conn: 1, Data: data}) }); n != 0 {
		t.Errorf("%v allocations per box, want 0", n)
	}
	_ = sink
}

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

// TestStandardMsgs: the message ids alternate publishers and count up per
// publisher.
func TestStandardMsgs(t *testing.T) {
	got := standardMsgs([2]string{"p1", "p2"}, 5)
	want := []string{"p1-1", "p2-1", "p1-2", "p2-2", "p1-3"}
	if len(got) != len(want) {
		t.Fatalf("got %d ids, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("id %d = %q, want %q", i, got[i], want[i])
		}
	}
}

// TestIDSet: add and del report membership changes like a set.
func TestIDSet(t *testing.T) {
	var s idSet
	steps := []struct {
		add  bool
		id   uint16
		want bool
	}{
		{true, 5, true}, {true, 5, false}, {true, 9, true}, {true, 1, true},
		{false, 5, true}, {false, 5, false}, {true, 5, true}, {false, 7, false},
		{false, 1, true}, {false, 9, true}, {false, 5, true}, {false, 5, false},
	}
	for i, st := range steps {
		var got bool
		if st.add {
			got = s.add(st.id)
		} else {
			got = s.del(st.id)
		}
		if got != st.want {
			t.Fatalf("step %d (add=%v id=%d) = %v, want %v", i, st.add, st.id, got, st.want)
		}
	}
	if len(s) != 0 {
		t.Fatalf("set not empty at the end: %v", s)
	}
}

// TestDeadConnRoomReused: a client's next connection takes the stream room
// of its connection whose sides are both gone, starting empty, and leaves
// the dead one with nothing pending; a connection with a live side, or
// another client's, is never taken.
func TestDeadConnRoomReused(t *testing.T) {
	var w World
	live := w.carve.newConn(nil)
	live.client, live.alive[sideBroker] = 1, true
	other := w.carve.newConn(nil)
	other.client = 2
	dead := w.carve.newConn(nil)
	dead.client = 1
	w.conns = []*conn{live, other, dead}
	for i := range dead.dir {
		s := &dead.dir[i]
		for j := 0; j < 300; j++ { // outgrow the first room
			s.write([]byte("x"))
			s.pkts = append(s.pkts, pktMark{end: uint64(j)})
			s.addSegment(uint64(j), 0)
		}
	}
	if got := w.deadConn(1); got != dead {
		t.Fatalf("deadConn(1) = %p, want the dead connection %p", got, dead)
	}
	c := w.carve.newConn(dead)
	for i := range c.dir {
		s := &c.dir[i]
		if len(s.buf) != 0 || len(s.segs) != 0 || len(s.pkts) != 0 || s.pending() {
			t.Fatalf("dir %d of the new connection is not empty", i)
		}
		if cap(s.buf) < 300 || cap(s.pkts) < 300 || cap(s.segs) < 300 {
			t.Fatalf("dir %d did not take the dead connection's room: caps %d %d %d", i, cap(s.buf), cap(s.pkts), cap(s.segs))
		}
		if dead.dir[i].pending() || dead.dir[i].pktHead != 0 || len(dead.dir[i].pkts) != 0 {
			t.Fatalf("dir %d of the dead connection still holds bytes or marks", i)
		}
	}
	if got := w.deadConn(1); got != nil {
		t.Fatalf("deadConn(1) = %p after its room was taken, want nil", got)
	}
	if got := w.deadConn(2); got != other {
		t.Fatalf("deadConn(2) = %p, want client 2's connection", got)
	}
}
