package plots

import "github.com/mqttlab/mqttlab/engine"

// Fault is the fault whose probability an experiment sweeps on its x axis.
type Fault uint8

// Swept faults.
const (
	// FaultSubscriberCrash: the subscriber crashes at each of its crash
	// points (including inside the application callback) with probability x.
	FaultSubscriberCrash Fault = iota + 1
	// FaultPublisherReboot: the publisher crashes and restarts from its
	// durable records at each of its crash points with probability x.
	FaultPublisherReboot
	// FaultSubscriberStateLoss: at each step the subscriber loses its
	// incoming QoS2 state with probability x (the model's StateLost event).
	FaultSubscriberStateLoss
	// FaultBrokerCrash: the broker crashes and restarts from its durable
	// records at each of its crash points with probability x.
	FaultBrokerCrash
)

// Failure is the invariant whose violation counts a run as failed.
type Failure uint8

// Counted failures.
const (
	// FailLoss: an accepted QoS≥1 message never reached a matching
	// persistent subscriber (the model's no-loss invariant).
	FailLoss Failure = iota + 1
	// FailStuck: a session never became idle after heal, or a PUBREL went
	// unanswered (the model's no-stuck and PUBREL-answered invariants).
	FailStuck
	// FailDuplicate: a QoS2 message reached an application twice (the
	// model's exactly-once invariant, [MQTT-4.3.3-10]).
	FailDuplicate
)

// Common axis wording.
const (
	yLoss      = "runs losing a message"
	yStuck     = "runs with a stuck session"
	yDuplicate = "runs delivering a QoS2 message twice"
)

// ackOrder is seed mosquitto-ack-after-callback: PUBACK/PUBREC before or
// after the application callback, against subscriber crashes.
func ackOrder() Experiment {
	return Experiment{
		Name:    "ack-order",
		Doc:     "message loss vs subscriber crash probability: ack before vs after the callback (seed mosquitto-ack-after-callback)",
		Title:   "Ack order: message loss under subscriber crashes",
		XLabel:  "subscriber crash probability per crash point",
		YLabel:  yLoss,
		Xs:      crashXs,
		Fault:   FaultSubscriberCrash,
		Failure: FailLoss,
		Variants: []Variant{
			variant("legacy", "ack before callback (legacy)", func(p *engine.Preset) { p.Client.AckOrder = engine.LegacyAckBeforeCallback }),
			variant("fixed", "ack after callback (fixed)", nil),
		},
	}
}

// retransmit is seed coremqtt-unclean-session-retransmits: where the
// publisher keeps unacked messages, against publisher reboots.
func retransmit() Experiment {
	return Experiment{
		Name:    "retransmit",
		Doc:     "message loss vs publisher reboot probability: retransmit store none / memory / durable (seed coremqtt-unclean-session-retransmits)",
		Title:   "Retransmit store: message loss under publisher reboots",
		XLabel:  "publisher reboot probability per crash point",
		YLabel:  yLoss,
		Xs:      crashXs,
		Fault:   FaultPublisherReboot,
		Failure: FailLoss,
		Variants: []Variant{
			variant("none", "no store (legacy)", func(p *engine.Preset) { p.Client.Retransmit = engine.LegacyRetransmitNone }),
			variant("memory", "memory store", func(p *engine.Preset) { p.Client.Retransmit = engine.RetransmitMemory }),
			variant("durable", "durable store (fixed)", nil),
		},
	}
}

// unknownPubrel is seed coremqtt-unknown-pubrel-0x92: what a subscriber that
// lost its QoS2 state does with the broker's resent PUBREL.
func unknownPubrel() Experiment {
	return Experiment{
		Name:    "unknown-pubrel",
		Doc:     "stuck sessions vs probability that a subscriber loses its QoS2 state: unknown PUBREL fail vs answer (seed coremqtt-unknown-pubrel-0x92)",
		Title:   "Unknown PUBREL: stuck sessions after QoS2 state loss",
		XLabel:  "subscriber QoS2 state loss probability per step",
		YLabel:  yStuck,
		Xs:      stateLossXs,
		Fault:   FaultSubscriberStateLoss,
		Failure: FailStuck,
		Variants: []Variant{
			variant("legacy", "unknown PUBREL is an error (legacy)", func(p *engine.Preset) { p.Client.UnknownPubrel = engine.LegacyUnknownAckFail }),
			variant("fixed", "answer PUBCOMP 0x92 (fixed)", nil),
		},
	}
}

// qos2State: with ack after callback, whether the subscriber's incoming QoS2
// ids survive a crash decides exactly-once delivery.
func qos2State() Experiment {
	return Experiment{
		Name:    "qos2-state",
		Doc:     "QoS2 duplicates vs subscriber crash probability: ack after callback with volatile vs durable incoming QoS2 state",
		Title:   "Incoming QoS2 state: duplicates under subscriber crashes",
		XLabel:  "subscriber crash probability per crash point",
		YLabel:  yDuplicate,
		Xs:      crashXs,
		Fault:   FaultSubscriberCrash,
		Failure: FailDuplicate,
		Variants: []Variant{
			variant("legacy", "volatile QoS2 state (legacy)", func(p *engine.Preset) { p.Client.IncomingQoS2 = engine.LegacyQoS2Volatile }),
			variant("fixed", "durable QoS2 state (fixed)", nil),
		},
	}
}

// brokerPersistence: how the broker makes its sessions durable, against
// broker crashes.
func brokerPersistence() Experiment {
	return Experiment{
		Name:    "broker-persistence",
		Doc:     "message loss vs broker crash probability: broker persistence none / periodic / every change",
		Title:   "Broker persistence: message loss under broker crashes",
		XLabel:  "broker crash probability per crash point",
		YLabel:  yLoss,
		Xs:      crashXs,
		Fault:   FaultBrokerCrash,
		Failure: FailLoss,
		Variants: []Variant{
			variant("none", "no persistence (legacy)", func(p *engine.Preset) { p.Broker.Persistence = engine.LegacyPersistNone }),
			variant("periodic", "periodic snapshot", func(p *engine.Preset) {
				p.Broker.Persistence = engine.PersistPeriodic
				p.Broker.SnapshotEvery = snapshotEvery
			}),
			variant("every-change", "every change (fixed)", nil),
		},
	}
}

// crashXs are the crash probabilities the crash experiments sweep.
var crashXs = []float64{0, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05}

// stateLossXs are the state-loss probabilities unknown-pubrel sweeps.
var stateLossXs = []float64{0, 0.01, 0.02, 0.05, 0.1, 0.2}

// snapshotEvery is the broker's snapshot period in the periodic variant.
const snapshotEvery = 8

// variant is the all-fixed preset with one change applied (nil: none).
func variant(name, label string, change func(*engine.Preset)) Variant {
	p := fixedPreset()
	p.Name = name
	p.Doc = label
	if change != nil {
		change(&p)
	}
	return Variant{Name: name, Label: label, Preset: p}
}

// fixedPreset has every fix of every seed on, so a variant differs from it
// only in the knob its experiment is about.
func fixedPreset() engine.Preset {
	return engine.Preset{
		Name: "fixed",
		Doc:  "every fix on",
		Client: engine.ClientPolicy{
			Retransmit:    engine.RetransmitDurable,
			UnknownPubrel: engine.UnknownAckAnswer,
			UnknownPubrec: engine.UnknownAckAnswer,
			AckOrder:      engine.AckAfterCallback,
			IncomingQoS2:  engine.QoS2Durable,
		},
		Broker: engine.BrokerPolicy{
			Persistence:   engine.PersistEveryChange,
			SnapshotEvery: snapshotEvery,
			UnknownPubrel: engine.UnknownAckAnswer,
			UnknownPubrec: engine.UnknownAckAnswer,
			AckOrder:      engine.AckAfterCallback,
		},
	}
}
