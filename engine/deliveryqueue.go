package engine

import "slices"

// deliveryQueue holds the deliveries awaiting the application's Ack in
// increasing DeliveryID order (the order they are delivered in), found by
// binary search. It replaces a map[DeliveryID]*clientDelivery: the usual
// Ack, of the oldest delivery, moves the head past it (no shift); a full
// array with room before the head moves the queue to its front instead of
// growing.
type deliveryQueue struct {
	ds   []*clientDelivery // ds[head:] is the queue
	head int
}

// push appends d, whose id is above every queued one.
func (q *deliveryQueue) push(d *clientDelivery) {
	if len(q.ds) == cap(q.ds) && q.head > 0 {
		n := copy(q.ds, q.ds[q.head:])
		clear(q.ds[n:])
		q.ds, q.head = q.ds[:n], 0
	}
	q.ds = appendPtr(q.ds, d)
}

// take removes and returns the delivery of id, or nil.
func (q *deliveryQueue) take(id DeliveryID) *clientDelivery {
	live := q.ds[q.head:]
	i, ok := 0, len(live) > 0 && live[0].did == id // the usual Ack: of the oldest
	if !ok {
		i, ok = slices.BinarySearchFunc(live, id, func(d *clientDelivery, id DeliveryID) int {
			return cmpU64(uint64(d.did), uint64(id))
		})
	}
	if !ok {
		return nil
	}
	d := live[i]
	switch {
	case len(live) == 1:
		q.ds[q.head] = nil // the slots before the head are nil already
		q.ds, q.head = q.ds[:0], 0
	case i == 0:
		q.ds[q.head] = nil
		q.head++
	default:
		copy(live[i:], live[i+1:])
		q.ds[len(q.ds)-1] = nil
		q.ds = q.ds[:len(q.ds)-1]
	}
	return d
}

// len is the number of queued deliveries.
func (q *deliveryQueue) len() int { return len(q.ds) - q.head }

// reset removes every delivery.
func (q *deliveryQueue) reset() {
	clear(q.ds)
	q.ds, q.head = q.ds[:0], 0
}
