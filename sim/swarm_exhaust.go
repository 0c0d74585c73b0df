package sim

import "github.com/mqttlab/mqttlab/engine"

// The swarm's exhaust dimension: packet-id exhaustion, which no ordinary
// run reaches (a client holds a few dozen ids at most). Drawn on (one seed
// in exhaustDen, from the stream planGen.more: a seed that draws it off
// keeps its plan), one publisher disconnects at a drawn message step and,
// while away, publishes a burst of exhaustBurst QoS 1 messages (one
// "publish ... count=" op): the client engine gives each a packet id as it
// accepts it, so the first 65,535 hold every id and the last one must be
// refused, never given id 0 or an id in flight [MQTT-2.2.1-3]. When the
// publisher is back (a clean start or not: messages never sent are not
// session state, the client keeps them) it sends the 65,535, so a reused id
// is on the wire for PacketIDUnique to see, and the model judges a refused
// id 0 (model.Refused) the same way. The burst's topic, $x/<client>, is
// matched by no subscription of the swarm (wildcards at the first level
// never match a $ topic [MQTT-4.7.2-1]), so the burst costs no deliveries;
// the broker's windows stay at their defaults (65,535), or the drain
// would take minutes of virtual time.

// exhaustDen: one seed in exhaustDen draws the exhaust dimension on.
const exhaustDen = 2000

// exhaustBurst is the burst's size: every packet id, and one more.
const exhaustBurst = 65536

// drawExhaust draws (or takes the pin of) the exhaust dimension, and the
// message step of the burst.
func (s *swarmGen) drawExhaust() {
	s.exhaust = s.wl.on(dimExhaust, s.more, 1, exhaustDen)
	if s.exhaust {
		s.exhaustStep = 1 + s.more.IntN(s.msgCount)
		s.windows = false
	}
}

// burstDue, at message step step, has a publisher that is connected
// disconnect and publish the burst while away; it returns 1-20 steps
// later. When every publisher is away or down the burst waits a step.
func (s *swarmGen) burstDue(step int) {
	if !s.exhaust || step < s.exhaustStep || s.exhaustDone {
		return
	}
	c := s.pubs[s.more.IntN(len(s.pubs))]
	if c.away || s.down[c.name] {
		s.exhaustStep++
		return
	}
	s.exhaustDone = true
	c.away = true
	s.add(Op{Kind: OpDisconnect, Node: c.name})
	s.advance(10 * ms)
	s.add(Op{Kind: OpPublish, Node: c.name, Topic: "$x/" + c.name, QoS: 1, Msg: c.name + "-x", Count: exhaustBurst})
	s.advance(engine.Duration(1+s.more.IntN(500)) * ms)
	s.away = append(s.away, swarmAway{c: c, step: step + 1 + s.more.IntN(20)})
}
