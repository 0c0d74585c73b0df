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
		XLabel:  "subscriber crash probability per crash point (first crash only)",
		YLabel:  yLoss,
		Xs:      crashXs,
		Fault:   FaultSubscriberCrash,
		Failure: FailLoss,
		Variants: []Variant{
			variant("legacy", "ack before callback (legacy)", "legacy-ack-order"),
			variant("fixed", "ack after callback (fixed)", "fixed"),
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
		XLabel:  "publisher reboot probability per crash point (first crash only)",
		YLabel:  yLoss,
		Xs:      crashXs,
		Fault:   FaultPublisherReboot,
		Failure: FailLoss,
		Variants: []Variant{
			variant("none", "no store (legacy)", "legacy-retransmit"),
			retransmitMemory(),
			variant("durable", "durable store (fixed)", "fixed"),
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
		XLabel:  "subscriber QoS2 state loss probability per workload step",
		YLabel:  yStuck,
		Xs:      stateLossXs,
		Fault:   FaultSubscriberStateLoss,
		Failure: FailStuck,
		Variants: []Variant{
			variant("legacy", "unknown PUBREL is an error (legacy)", "legacy-pubrel"),
			variant("fixed", "answer PUBCOMP 0x92 (fixed)", "fixed"),
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
		XLabel:  "subscriber crash probability per crash point (first crash only)",
		YLabel:  yDuplicate,
		Xs:      crashXs,
		Fault:   FaultSubscriberCrash,
		Failure: FailDuplicate,
		Variants: []Variant{
			variant("legacy", "volatile QoS2 state (legacy)", "volatile-qos2"),
			variant("fixed", "durable QoS2 state (fixed)", "fixed"),
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
		XLabel:  "broker crash probability per crash point (first crash only)",
		YLabel:  yLoss,
		Xs:      crashXs,
		Fault:   FaultBrokerCrash,
		Failure: FailLoss,
		Variants: []Variant{
			variant("none", "no persistence (legacy)", "broker-nopersist"),
			variant("periodic", "periodic snapshot", "broker-periodic"),
			variant("every-change", "every change (fixed)", "fixed"),
		},
	}
}

// crashXs are the crash probabilities the crash experiments sweep.
var crashXs = []float64{0, 0.00025, 0.0005, 0.001, 0.002, 0.004}

// stateLossXs are the state-loss probabilities unknown-pubrel sweeps.
var stateLossXs = []float64{0, 0.0025, 0.005, 0.01, 0.02, 0.04}

// variant is a variant running the engine preset called preset. An unknown
// preset leaves Preset empty, which Validate reports.
func variant(name, label, preset string) Variant {
	p, _ := engine.PresetByName(preset)
	return Variant{Name: name, Label: label, Preset: p}
}

// retransmitMemory is the fixed preset with an in-memory retransmit store.
// engine has no preset of that name: a trial's plan header carries its
// policies in a policy line (TrialPlan).
func retransmitMemory() Variant {
	p, _ := engine.PresetByName("fixed")
	if p.Name != "" {
		p.Name = "retransmit-memory"
		p.Doc = "fixed, except the client keeps its retransmit copies in memory only"
		p.Client.Retransmit = engine.RetransmitMemory
	}
	return Variant{Name: "memory", Label: "memory store", Preset: p}
}
