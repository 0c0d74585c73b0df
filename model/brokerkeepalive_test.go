package model

import "testing"

// kaConnect opens s1's connection at t seconds with Keep Alive ka and the
// broker's Server Keep Alive ska (0: none).
func (b *hb) kaConnect(t int64, ka, ska uint16) *hb {
	return b.at(t, func(b *hb) {
		b.opened("s1")
		b.xfer("s1", BrokerNode, Packet{Type: CONNECT, KeepAlive: ka})
		b.xfer(BrokerNode, "s1", Packet{Type: CONNACK, KeepAlive: ska})
	})
}

// ping is a PINGREQ from s1 the broker receives at t seconds.
func (b *hb) ping(t int64) *hb {
	return b.at(t, func(b *hb) { b.xfer("s1", BrokerNode, Packet{Type: PINGREQ}) })
}

// kaClose is the broker closing s1's connection at t seconds for reason.
func (b *hb) kaClose(t int64, reason uint8) *hb {
	return b.at(t, func(b *hb) {
		b.ev(Event{Kind: ConnClosed, Node: BrokerNode, Peer: "s1", Packet: Packet{Reason: reason}})
		b.ev(Event{Kind: ConnClosed, Node: "s1", Peer: BrokerNode})
	})
}

// TestInvariantBrokerKeepAlive: the broker may close a connection for keep-alive
// only after 1.5 × Keep Alive without a packet [MQTT-3.1.2-22].
func TestInvariantBrokerKeepAlive(t *testing.T) {
	runInvariantCases(t, BrokerKeepAlive, []invariantCase{
		{"idle 1.5 x keep-alive", newHB().kaConnect(0, 10, 0).kaClose(15, KeepAliveTimeout), false, ""},
		{"idle after a ping", newHB().kaConnect(0, 10, 0).ping(9).kaClose(24, KeepAliveTimeout), false, ""},
		{"closed 1 x keep-alive after the CONNECT", newHB().kaConnect(0, 10, 0).kaClose(10, KeepAliveTimeout),
			true, "before 1.5 × Keep Alive 10 s"},
		{"timer not reset by a ping", newHB().kaConnect(0, 10, 0).ping(9).kaClose(15, KeepAliveTimeout),
			true, "6.000 s after the last packet"},
		{"other closes are not judged", newHB().kaConnect(0, 10, 0).ping(9).kaClose(10, 0), false, ""},
		{"no keep-alive", newHB().kaConnect(0, 0, 0).kaClose(1, KeepAliveTimeout), false, ""},
		{"server keep-alive is the limit", newHB().kaConnect(0, 60, 10).kaClose(15, KeepAliveTimeout), false, ""},
		{"server keep-alive, closed early", newHB().kaConnect(0, 60, 10).kaClose(14, KeepAliveTimeout), true, "Keep Alive 10 s"},
		{"a new connection starts afresh", newHB().kaConnect(0, 10, 0).kaClose(15, KeepAliveTimeout).
			at(16, func(b *hb) { b.opened("s1") }).kaClose(17, KeepAliveTimeout), false, ""},
	})
}
