package engine

import (
	"errors"
	"testing"

	"pgregory.net/rapid"
)

func TestIDAllocatorSequence(t *testing.T) {
	var a IDAllocator
	for want := uint16(1); want <= 5; want++ {
		got, err := a.Alloc()
		if err != nil || got != want {
			t.Fatalf("Alloc = %d, %v; want %d", got, err, want)
		}
	}
	a.Free(2)
	// lowest free id AFTER the last one, not the lowest free overall
	if got, _ := a.Alloc(); got != 6 {
		t.Fatalf("after freeing 2, Alloc = %d, want 6", got)
	}
	if a.Len() != 5 {
		t.Fatalf("Len = %d, want 5", a.Len())
	}
}

func TestIDAllocatorWrapsAndSkipsInFlight(t *testing.T) {
	var a IDAllocator
	if err := a.Claim(1); err != nil {
		t.Fatal(err)
	}
	if err := a.Claim(3); err != nil {
		t.Fatal(err)
	}
	a.SetLast(65534)
	cases := []uint16{65535, 2, 4}
	for _, want := range cases {
		got, err := a.Alloc()
		if err != nil || got != want {
			t.Fatalf("Alloc = %d, %v; want %d", got, err, want)
		}
	}
}

func TestIDAllocatorExhaustion(t *testing.T) {
	var a IDAllocator
	for i := 0; i < 65535; i++ {
		if _, err := a.Alloc(); err != nil {
			t.Fatalf("alloc %d: %v", i, err)
		}
	}
	if _, err := a.Alloc(); !errors.Is(err, ErrIDsExhausted) {
		t.Fatalf("Alloc with all ids in flight = %v, want ErrIDsExhausted", err)
	}
	a.Free(40000)
	if got, err := a.Alloc(); err != nil || got != 40000 {
		t.Fatalf("Alloc after Free(40000) = %d, %v", got, err)
	}
}

func TestIDAllocatorClaimErrors(t *testing.T) {
	var a IDAllocator
	if err := a.Claim(0); !errors.Is(err, ErrIDInUse) {
		t.Fatalf("Claim(0) = %v", err)
	}
	_ = a.Claim(7)
	if err := a.Claim(7); !errors.Is(err, ErrIDInUse) {
		t.Fatalf("Claim twice = %v", err)
	}
}

// TestIDAllocatorNeverReusesInFlight: a random sequence of allocs and frees
// never hands out an id that is in flight, never 0, and is deterministic.
func TestIDAllocatorNeverReusesInFlight(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var a, b IDAllocator
		inFlight := map[uint16]bool{}
		var order []uint16
		steps := rapid.IntRange(1, 300).Draw(t, "steps")
		for i := 0; i < steps; i++ {
			if len(order) > 0 && rapid.Bool().Draw(t, "free") {
				k := rapid.IntRange(0, len(order)-1).Draw(t, "k")
				id := order[k]
				order = append(order[:k], order[k+1:]...)
				delete(inFlight, id)
				a.Free(id)
				b.Free(id)
				continue
			}
			id, err := a.Alloc()
			if err != nil {
				t.Fatal(err)
			}
			id2, _ := b.Alloc()
			if id != id2 {
				t.Fatalf("not deterministic: %d vs %d", id, id2)
			}
			if id == 0 || inFlight[id] {
				t.Fatalf("Alloc returned %d which is 0 or in flight", id)
			}
			inFlight[id] = true
			order = append(order, id)
		}
		if a.Len() != len(inFlight) {
			t.Fatalf("Len = %d, want %d", a.Len(), len(inFlight))
		}
	})
}

// TestMutReuseInflightID proves the canary mutation hands out an id in flight.
func TestMutReuseInflightID(t *testing.T) {
	a := IDAllocator{Mutations: MutReuseInflightID}
	first, _ := a.Alloc()
	second, _ := a.Alloc()
	if !a.InUse(first) || first != second {
		t.Fatalf("mutation: got %d then %d, want the in-flight id reused", first, second)
	}
}

// TestMutPacketIDZero proves the canary hands out id 0 when the counter
// wraps (once until it is freed), where the fixed allocator wraps to 1.
func TestMutPacketIDZero(t *testing.T) {
	for _, c := range []struct {
		mut  Mutation
		want []uint16
	}{{0, []uint16{65535, 1, 2}}, {MutPacketIDZero, []uint16{65535, 0, 1}}} {
		a := IDAllocator{Mutations: c.mut}
		a.SetLast(65534)
		for i, want := range c.want {
			if got, err := a.Alloc(); err != nil || got != want {
				t.Fatalf("%v: alloc %d = %d, %v; want %d", c.mut, i, got, err, want)
			}
		}
	}
}

// refAlloc is the obvious IDAllocator: a set of in-flight ids and a linear
// search after the last one handed out.
type refAlloc struct {
	used map[uint16]bool
	last uint16
}

func (r *refAlloc) alloc() uint16 {
	for i := 1; i <= 65535; i++ {
		id := uint16((int(r.last)+i-1)%65535 + 1)
		if !r.used[id] {
			r.used[id], r.last = true, id
			return id
		}
	}
	return 0
}

// TestIDAllocatorMatchesReference: random Alloc, Free, Claim, SetLast and
// Reset over the whole id range (the in-flight set grows on demand) give
// the same ids and the same InUse answers as the obvious implementation.
func TestIDAllocatorMatchesReference(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var a IDAllocator
		ref := refAlloc{used: map[uint16]bool{}}
		anyID := rapid.Uint16Range(1, 65535)
		for range rapid.IntRange(1, 200).Draw(t, "steps") {
			switch op := rapid.IntRange(0, 9).Draw(t, "op"); {
			case op < 4:
				if got, want := mustAlloc(t, &a), ref.alloc(); got != want {
					t.Fatalf("Alloc = %d, want %d", got, want)
				}
			case op < 6:
				id := anyID.Draw(t, "free")
				a.Free(id)
				delete(ref.used, id)
			case op < 7:
				id := anyID.Draw(t, "claim")
				if err := a.Claim(id); (err == nil) == ref.used[id] {
					t.Fatalf("Claim(%d) = %v with in flight %v", id, err, ref.used[id])
				}
				ref.used[id] = true
			case op < 9:
				id := anyID.Draw(t, "last")
				a.SetLast(id)
				ref.last = id
			default:
				a.Reset()
				ref = refAlloc{used: map[uint16]bool{}}
			}
			for _, id := range []uint16{1, 63, 64, 65, 1000, 65535, ref.last, ref.last + 1} {
				if a.InUse(id) != ref.used[id] {
					t.Fatalf("InUse(%d) = %v, want %v", id, a.InUse(id), ref.used[id])
				}
			}
			if a.Len() != len(ref.used) {
				t.Fatalf("Len = %d, want %d", a.Len(), len(ref.used))
			}
		}
	})
}

func mustAlloc(t *rapid.T, a *IDAllocator) uint16 {
	id, err := a.Alloc()
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// TestIDAllocatorSmallSetForSmallIDs: an allocator that hands out a few
// small ids keeps a few words, not the set of all 65535 ids.
func TestIDAllocatorSmallSetForSmallIDs(t *testing.T) {
	var a IDAllocator
	for range 100 {
		mustAllocT(t, &a)
	}
	if cap(a.used) > 4 {
		t.Fatalf("100 ids use %d words", cap(a.used))
	}
	if err := a.Claim(65535); err != nil || !a.InUse(65535) {
		t.Fatalf("Claim(65535) = %v, InUse %v", err, a.InUse(65535))
	}
}

func mustAllocT(t *testing.T, a *IDAllocator) uint16 {
	t.Helper()
	id, err := a.Alloc()
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// TestIDAllocatorExhaustedReuseCanary: under MutExhaustedReuse an
// allocator with every id in flight hands out an id in flight (the last
// one again) where the fixed one refuses.
func TestIDAllocatorExhaustedReuseCanary(t *testing.T) {
	a := IDAllocator{Mutations: MutExhaustedReuse}
	for range 65535 {
		if _, err := a.Alloc(); err != nil {
			t.Fatal(err)
		}
	}
	id, err := a.Alloc()
	if err != nil || id != 65535 || !a.InUse(id) {
		t.Fatalf("mutant Alloc at exhaustion = %d, %v; want 65535 (in flight), nil", id, err)
	}
}
