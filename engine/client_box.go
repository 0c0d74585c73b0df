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
