package engine

import "slices"

// headQueue is a FIFO of deliveries kept as ds[head:]: taking the front
// moves the head past it (no shift; the slots before the head are nil), an
// emptied queue starts again at the front, and a full array with room before
// the head moves the queue to its front instead of growing.
type headQueue struct {
	ds   []*clientDelivery // ds[head:] is the queue
	head int
}

// push appends d.
func (q *headQueue) push(d *clientDelivery) {
	if len(q.ds) == cap(q.ds) && q.head > 0 {
		n := copy(q.ds, q.ds[q.head:])
		clear(q.ds[n:])
		q.ds, q.head = q.ds[:n], 0
	}
	q.ds = appendPtr(q.ds, d)
}

// front returns the first delivery, or nil.
func (q *headQueue) front() *clientDelivery {
	if q.head < len(q.ds) {
		return q.ds[q.head]
	}
	return nil
}

// popFront removes the first delivery (the queue is not empty).
func (q *headQueue) popFront() {
	q.ds[q.head] = nil
	if q.head++; q.head == len(q.ds) {
		q.ds, q.head = q.ds[:0], 0
	}
}

// len is the number of queued deliveries.
func (q *headQueue) len() int { return len(q.ds) - q.head }

// reset removes every delivery.
func (q *headQueue) reset() {
	clear(q.ds)
	q.ds, q.head = q.ds[:0], 0
}

// deliveryQueue holds the deliveries awaiting the application's Ack in
// increasing DeliveryID order (the order they are delivered in, so push
// keeps it), found by binary search. It replaces a
// map[DeliveryID]*clientDelivery: the usual Ack, of the oldest delivery,
// takes the front.
type deliveryQueue struct{ headQueue }

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
	case i == 0:
		q.popFront()
	default:
		copy(live[i:], live[i+1:])
		q.ds[len(q.ds)-1] = nil
		q.ds = q.ds[:len(q.ds)-1]
	}
	return d
}
