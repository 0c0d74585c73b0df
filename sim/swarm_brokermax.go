package sim

// The swarm's brokermax dimension: the broker's Maximum Packet Size
// (BrokerConfig.MaxPacketSize, "node broker maxsize=N"), which every v5
// CONNACK announces. Drawn on (one seed in brokerMaxDen, from its own
// stream planGen.maxR: a seed that draws it off keeps its plan), the limit
// is 512-2048 bytes and payload padding is on (unless pinned off), so some
// padded publishes exceed it. A v5 client must not send those
// [MQTT-3.2.2-15]: it refuses them (a Refused event, after the Accepted
// when the message waited for a connection), and they are owed to no one;
// MaxPacketSize judges that nothing larger reaches the wire and that every
// refusal was due. A 3.1.1 client is told no limit (3.1.1 has none to
// announce) and the broker would close its connection on every resend of
// an oversized PUBLISH, so 3.1.1 publishers pad only below the limit.

// brokerMaxDen: one seed in brokerMaxDen draws the brokermax dimension on.
const brokerMaxDen = 8

// brokerMaxHeadroom is what a 3.1.1 publisher's padding leaves of the
// broker's limit for the rest of the PUBLISH (fixed header, topic, packet
// id, message id).
const brokerMaxHeadroom = 128

// drawBrokerMax draws (or takes the pin of) the brokermax dimension and the
// broker's limit, once the on/off dimensions are drawn.
func (s *swarmGen) drawBrokerMax() {
	if !s.wl.on(dimBrokerMax, s.maxR, 1, brokerMaxDen) {
		return
	}
	s.brokerMax = uint32(512 + s.maxR.IntN(1537))
	if !s.wl.pins[dimPayload].set {
		s.payload = true
	}
}

// fitBrokerMax keeps a 3.1.1 publisher's padded publish op below the
// broker's limit.
func (s *swarmGen) fitBrokerMax(c *swarmClient, op *Op) {
	if s.brokerMax != 0 && c.version != 5 && int(op.Pad)+brokerMaxHeadroom > int(s.brokerMax) {
		op.Pad = uint16(int(s.brokerMax) - brokerMaxHeadroom)
	}
}
