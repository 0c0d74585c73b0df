package sim

import "github.com/mqttlab/mqttlab/engine"

// The swarm's broker options that no dimension drew before (issue 21),
// drawn from the stream planGen.opts (a seed that draws them off keeps its
// plan):
//
//   - queue: the broker's per-session queue bound (BrokerConfig.MaxQueued,
//     max_queued_messages) of 2-8 copies, and which copy goes when a copy
//     arrives at a full queue (QueueFull, queue_full): "node broker queue=N
//     queuefull=drop-oldest|drop-newest". The bound is declared to the
//     model (World.brokerLimits), and the broker's drops are recorded as
//     Dropped events, so NoLoss and FlowResume excuse exactly the drops
//     the bound allows (model/droplimits.go) [MQTT-4.1.0-1].
//   - serverka: the broker's max_keepalive (BrokerConfig.MaxKeepAlive,
//     "node broker maxka=N") of 1-10 s, 1-2 s when the keepalive dimension
//     draws keep-alives of 1-3 s: a v5 client asking more is told it as
//     Server Keep Alive in CONNACK and must use it [MQTT-3.2.2-21], and the
//     broker enforces 1.5 times it [MQTT-3.1.2-22]; ClientKeepAlive and
//     BrokerKeepAlive judge against it. A 3.1.1 client asking more is
//     refused (0x02, mosquitto's behaviour) and would never connect, so
//     each 3.1.1 client asks at most the maximum. A serverka seed has no
//     idle clients unless idle is pinned: hundreds of them pinging every
//     few seconds would keep the world from ever going quiet.

// optionsDen: one seed in optionsDen draws each broker option on.
const optionsDen = 8

// Queue values of the queue dimension.
const (
	queueOff = iota
	queueOldest
	queueNewest
)

// drawOptions draws (or takes the pins of) the queue and serverka
// dimensions, once every client is drawn. Every draw is made whatever the
// dimensions, so one dimension's draw never moves the other's.
func (s *swarmGen) drawOptions() {
	o := s.opts
	q := s.wl.value(dimQueue, func() int {
		if o.Chance(1, optionsDen) {
			return queueOldest + o.IntN(2)
		}
		return queueOff
	})
	bound := uint32(2 + o.IntN(7))
	serverKA := s.wl.on(dimServerKA, o, 1, optionsDen)
	span := 10
	if s.keepAlive {
		span = 2
	}
	maxKA := uint16(1 + o.IntN(span))
	if q != queueOff && !s.longWrap { // the long wrap keeps its own bound
		s.queue, s.queueFull = bound, engine.DropOldest
		if q == queueNewest {
			s.queueFull = engine.DropNewest
		}
	}
	if !serverKA {
		return
	}
	s.maxKA = maxKA
	if !s.wl.pins[dimIdle].set {
		// Hundreds of idle clients pinging every 1-10 s keep the network
		// busy for good: the world never goes quiet (NoStuck). A serverka
		// seed draws none.
		s.idle = nil
	}
	for _, c := range append(append(s.all(), s.members...), s.idle...) {
		if c.version != 4 {
			continue
		}
		if ka := c.cfg.KeepAlive; ka == 0 && uint16(s.scen.KeepAlive/engine.Second) > maxKA || ka > maxKA {
			c.cfg.KeepAlive = maxKA // a 3.1.1 client asking more is refused
		}
	}
}
