package sim

import (
	"strings"

	"github.com/mqttlab/mqttlab/engine"
	"github.com/mqttlab/mqttlab/engine/packet"
	"github.com/mqttlab/mqttlab/model"
)

// defaultPreset is the preset of a config that names none: "fixed".
func defaultPreset() (engine.Preset, error) { return engine.PresetByName("fixed") }

// defaultFactory builds the real engines: the broker with its default
// config, each client with a persistent session that never expires (5.0) or
// Clean Session 0 (3.1.1) and the scenario's keep-alive.
func defaultFactory(spec NodeSpec, restored []engine.Record) (Engine, error) {
	return buildEngine(spec, restored, engineTweaks{})
}

// engineTweaks change the configs defaultFactory builds, last (tests turn
// on engine options no scenario knob reaches); nil fields change nothing.
type engineTweaks struct {
	broker func(*engine.BrokerConfig)
	client func(*engine.ClientConfig)
}

// buildEngine is defaultFactory with tw.
func buildEngine(spec NodeSpec, restored []engine.Record, tw engineTweaks) (Engine, error) {
	if spec.Broker {
		bc := engine.DefaultBrokerConfig(spec.Preset.Broker)
		spec.Config.brokerConfig(&bc)
		bc.OnDrop = spec.onDrop
		if tw.broker != nil {
			tw.broker(&bc)
		}
		bc.ReuseActions = true // World.step is done with a Step's actions before the next
		b, err := engine.NewBroker(bc, restored)
		if err != nil {
			return nil, err
		}
		return b, nil
	}
	cfg := engine.DefaultClientConfig(spec.Name, spec.Preset.Client)
	cfg.Version = packet.Version(spec.Version)
	if cfg.Version == packet.V311 {
		cfg.SessionExpiry = 0
	}
	cfg.KeepAlive = uint16(spec.KeepAlive / engine.Second)
	spec.Config.clientConfig(&cfg)
	if cfg.Version == packet.V311 {
		cfg.SessionExpiry = 0
	}
	if tw.client != nil {
		tw.client(&cfg)
	}
	cfg.ReuseActions = true
	c, err := engine.NewClient(cfg, restored)
	if err != nil {
		return nil, err
	}
	return c, nil
}

// clientSessionKey is the client record that marks a session it holds.
const clientSessionKey = "session"

// isIncomingQoS2Key reports whether a client record holds incoming QoS2
// state (the engine keeps it under "in/<id>").
func isIncomingQoS2Key(key string) bool { return strings.HasPrefix(key, "in/") }

// ModelPolicy translates an engine preset into the model's terms. A model
// field that fuses two engine knobs takes the weaker; mutations are bugs the
// model must catch, so they promise nothing less.
func ModelPolicy(p engine.Preset) model.Policy {
	c, b := p.Client, p.Broker
	mp := model.Policy{
		Retransmit:           model.RetransmitNone,
		UnknownAck:           model.UnknownAckAnswer,
		AckBeforeCallback:    c.AckOrder == engine.LegacyAckBeforeCallback,
		QoS2Durable:          c.IncomingQoS2 == engine.QoS2Durable,
		Broker:               model.PersistNone,
		BrokerUnknownAck:     model.UnknownAckAnswer,
		BrokerAckBeforeStore: b.AckOrder == engine.LegacyAckBeforeCallback,
	}
	switch c.Retransmit {
	case engine.RetransmitMemory:
		mp.Retransmit = model.RetransmitMemory
	case engine.RetransmitDurable:
		mp.Retransmit = model.RetransmitDurable
	}
	if c.UnknownPubrel != engine.UnknownAckAnswer || c.UnknownPubrec != engine.UnknownAckAnswer {
		mp.UnknownAck = model.UnknownAckFail
	}
	if b.UnknownPubrel != engine.UnknownAckAnswer || b.UnknownPubrec != engine.UnknownAckAnswer {
		mp.BrokerUnknownAck = model.UnknownAckFail
	}
	switch b.Persistence {
	case engine.PersistPeriodic:
		mp.Broker = model.PersistPeriodic
	case engine.PersistEveryChange:
		mp.Broker = model.PersistEveryChange
	}
	return mp
}
