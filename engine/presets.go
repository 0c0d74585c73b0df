package engine

import (
	"errors"
	"fmt"
	"strings"
)

// ErrUnknownPreset is returned by PresetByName for a name not in Presets.
var ErrUnknownPreset = errors.New("engine: unknown preset")

// presetLegacyClient has every client seed bug on.
var presetLegacyClient = ClientPolicy{
	Retransmit:    LegacyRetransmitNone,
	UnknownPubrel: LegacyUnknownAckFail,
	UnknownPubrec: LegacyUnknownAckFail,
	AckOrder:      LegacyAckBeforeCallback,
	IncomingQoS2:  LegacyQoS2Volatile,
}

// presetLegacyBroker has every broker legacy knob on.
var presetLegacyBroker = BrokerPolicy{
	Persistence:   LegacyPersistNone,
	UnknownPubrel: LegacyUnknownAckFail,
	UnknownPubrec: LegacyUnknownAckFail,
	AckOrder:      LegacyAckBeforeCallback,
}

// presetFixedClient has every client fix on, durable everything.
var presetFixedClient = ClientPolicy{
	Retransmit:    RetransmitDurable,
	UnknownPubrel: UnknownAckAnswer,
	UnknownPubrec: UnknownAckAnswer,
	AckOrder:      AckAfterCallback,
	IncomingQoS2:  QoS2Durable,
}

// presetFixedBroker has every broker fix on.
var presetFixedBroker = BrokerPolicy{
	Persistence:   PersistEveryChange,
	UnknownPubrel: UnknownAckAnswer,
	UnknownPubrec: UnknownAckAnswer,
	AckOrder:      AckAfterCallback,
}

// Presets lists the named policy pairs: legacy (every seed bug), fixed (every
// fix), and one preset per single bug (fixed except that one knob).
func Presets() []Preset {
	fixedExcept := func(name, doc string, edit func(c *ClientPolicy, b *BrokerPolicy)) Preset {
		p := Preset{Name: name, Doc: doc, Client: presetFixedClient, Broker: presetFixedBroker}
		edit(&p.Client, &p.Broker)
		return p
	}
	return []Preset{
		{Name: "legacy", Doc: "every legacy knob on both sides: no retransmit store, stuck on unknown PUBREL/PUBREC, ack before callback, volatile QoS2 state, broker without persistence",
			Client: presetLegacyClient, Broker: presetLegacyBroker},
		{Name: "fixed", Doc: "every fix on: durable retransmit store, 0x92 answers, ack after callback, durable QoS2 state, broker persists every change",
			Client: presetFixedClient, Broker: presetFixedBroker},
		fixedExcept("legacy-retransmit", "fixed, except the client keeps no retransmit copy (coreMQTT before the retransmit hooks)",
			func(c *ClientPolicy, _ *BrokerPolicy) { c.Retransmit = LegacyRetransmitNone }),
		fixedExcept("legacy-pubrel", "fixed, except an unknown PUBREL (or PUBREC) leaves the client stuck (coreMQTT #271)",
			func(c *ClientPolicy, _ *BrokerPolicy) {
				c.UnknownPubrel, c.UnknownPubrec = LegacyUnknownAckFail, LegacyUnknownAckFail
			}),
		fixedExcept("legacy-ack-order", "fixed, except the client sends PUBACK/PUBREC before the application callback (mosquitto #2884)",
			func(c *ClientPolicy, _ *BrokerPolicy) { c.AckOrder = LegacyAckBeforeCallback }),
		fixedExcept("volatile-qos2", "fixed, except the client keeps its incoming QoS2 ids in memory only",
			func(c *ClientPolicy, _ *BrokerPolicy) { c.IncomingQoS2 = LegacyQoS2Volatile }),
		fixedExcept("broker-nopersist", "fixed, except the broker keeps its state in memory only",
			func(_ *ClientPolicy, b *BrokerPolicy) { b.Persistence = LegacyPersistNone }),
		fixedExcept("broker-periodic", "fixed, except the broker snapshots its state every 16 changes (mosquitto autosave)",
			func(_ *ClientPolicy, b *BrokerPolicy) { b.Persistence, b.SnapshotEvery = PersistPeriodic, 16 }),
	}
}

// PresetByName returns the preset called name, or an error wrapping
// ErrUnknownPreset that lists the valid names.
func PresetByName(name string) (Preset, error) {
	all := Presets()
	names := make([]string, len(all))
	for i, p := range all {
		if p.Name == name {
			return p, nil
		}
		names[i] = p.Name
	}
	return Preset{}, fmt.Errorf("%w %q; valid names: %s", ErrUnknownPreset, name, strings.Join(names, ", "))
}
