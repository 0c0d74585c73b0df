package sim

import "strconv"

// The swarm's wrap dimension: packet ids that wrap from 65535 to 1, which a
// run of a few hundred messages never reaches on its own. Drawn on (one seed
// in 4, from its own stream planGen.wrapR: a seed that draws it off keeps
// its plan), every active client's and every new broker session's counter
// starts a few ids below 65535 (a node's "startid"), so the ids wrap after
// a few packets, the way tests of real clients and brokers set the counter:
// id 0 must never be used [MQTT-2.2.1-3] [MQTT-2.2.1-4], and the top ids
// are still in flight when the counter goes on at 1. An id still in flight
// when the counter comes round to it again takes 65,535 ids: wrap=long
// (pinned only) wraps that slow way, one publisher sending wrapCount QoS 1
// messages (seconds of CPU and hundreds of MB per seed); the allocator's
// unit tests cover the skip.

// The wrap dimension's values.
const (
	wrapOff = iota
	wrapOn
	wrapLong
)

// wrapStartSpan is how far below 65535 a drawn counter starts: it wraps
// after at most this many ids.
const wrapStartSpan = 8

// drawWrap draws (or takes the pin of) the wrap dimension.
func (s *swarmGen) drawWrap() {
	v := s.wl.value(dimWrap, func() int { return b2i(s.wrapR.Chance(1, 4)) })
	s.wrap, s.longWrap = v == wrapOn, v == wrapLong
}

// startID draws where a packet-id counter starts: 65535-wrapStartSpan+1
// to 65535, so its first ids are the last ones before the wrap.
func (s *swarmGen) startID() uint16 {
	return uint16(65535 - s.wrapR.IntN(wrapStartSpan))
}

// wrapStarts gives every active client and shared-subscription member a
// drawn start id when the wrap dimension is on.
func (s *swarmGen) wrapStarts() {
	if !s.wrap {
		return
	}
	for _, c := range append(s.all(), s.members...) {
		c.cfg.StartID = s.startID()
	}
}

// wrapCount is how many QoS 1 messages wrap=long sends: more than the
// 65,535 packet ids, so the publisher's and the broker's ids wrap.
const wrapCount = 65600

// wrapIDs has the first publisher send wrapCount QoS 1 messages to
// "wrap/x", a few between pauses, so ids are freed and reused round the
// 16-bit space.
func (s *swarmGen) wrapIDs() {
	c := s.pubs[0]
	for i := 1; i <= wrapCount; i++ {
		c.sent++
		s.add(Op{Kind: OpPublish, Node: c.name, Topic: "wrap/x", QoS: 1, Msg: c.name + "-" + strconv.Itoa(c.sent)})
		if i%4 == 0 {
			s.advance(5 * ms)
		}
	}
}
