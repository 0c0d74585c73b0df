package engine

// The client's allocation-saving machinery is the shared one of box.go:
// slab-boxed actions, structs and bytes carved from never-reused blocks.

// clientSlab is the client's name for the shared slab.
type clientSlab[T any] = slab[T]

// clientArena is the client's name for the shared byteArena.
type clientArena = byteArena

// clientActions are the client's slabs of the actions it emits per message.
type clientActions struct {
	send     actionSlab[Send]
	complete actionSlab[Complete]
	deliver  actionSlab[Deliver]
	persist  actionSlab[Persist]
	timer    actionSlab[SetTimer]
}

// rewind reuses every slab's current block (ClientConfig.ReuseActions).
func (a *clientActions) rewind() {
	a.send.rewind()
	a.complete.rewind()
	a.deliver.rewind()
	a.persist.rewind()
	a.timer.rewind()
}

// queueRoom is the first capacity of the client's queues of pointers
// (owed acks, pending deliveries, outgoing messages): a fresh client soon
// holds a few, so they start there instead of growing 1, 2, 4, 8.
const queueRoom = 8

// appendPtr is append for those queues.
func appendPtr[T any](s []*T, p *T) []*T {
	if cap(s) == 0 {
		s = make([]*T, 0, queueRoom)
	}
	return append(s, p)
}
