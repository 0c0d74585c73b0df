package engine

import (
	"errors"
	"strings"
	"testing"

	"github.com/mqttlab/mqttlab/engine/packet"
)

func TestClientConfigValidate(t *testing.T) {
	p, _ := PresetByName("fixed")
	good := DefaultClientConfig("c1", p.Client)
	if err := good.Validate(); err != nil {
		t.Fatalf("default config: %v", err)
	}
	cases := []struct {
		name string
		edit func(*ClientConfig)
		want string
	}{
		{"empty id", func(c *ClientConfig) { c.ClientID = "" }, "ClientID is empty"},
		{"bad utf8 id", func(c *ClientConfig) { c.ClientID = "\xff" }, "not valid UTF-8"},
		{"long id", func(c *ClientConfig) { c.ClientID = strings.Repeat("x", 65536) }, "at most 65535"},
		{"version 3", func(c *ClientConfig) { c.Version = 3 }, "Version 3"},
		{"will without topic", func(c *ClientConfig) { c.Will = &Will{} }, "not a valid topic name"},
		{"will wildcard", func(c *ClientConfig) { c.Will = &Will{Topic: "a/#"} }, "wildcard"},
		{"will qos 3", func(c *ClientConfig) { c.Will = &Will{Topic: "a", QoS: 3} }, "will QoS 3"},
		{"will delay in 3.1.1", func(c *ClientConfig) {
			c.Version, c.SessionExpiry, c.Will = packet.V311, 0, &Will{Topic: "a", Delay: 1}
		}, "needs Version 5"},
		{"expiry in 3.1.1", func(c *ClientConfig) { c.Version = packet.V311 }, "SessionExpiry"},
		{"receive max 0", func(c *ClientConfig) { c.ReceiveMaximum = 0 }, "ReceiveMaximum"},
		{"window 0", func(c *ClientConfig) { c.InflightWindow = 0 }, "InflightWindow"},
		{"packet size small", func(c *ClientConfig) { c.MaxPacketSize = 10 }, "MaxPacketSize"},
		{"packet size big", func(c *ClientConfig) { c.MaxPacketSize = 1 << 30 }, "MaxPacketSize"},
		{"ping timeout", func(c *ClientConfig) { c.PingTimeout = 0 }, "PingTimeout"},
		{"connack timeout", func(c *ClientConfig) { c.ConnackTimeout = -1 }, "ConnackTimeout"},
		{"retransmit unset", func(c *ClientConfig) { c.Policy.Retransmit = 0 }, "Policy.Retransmit"},
		{"retransmit range", func(c *ClientConfig) { c.Policy.Retransmit = 4 }, "Policy.Retransmit"},
		{"pubrel unset", func(c *ClientConfig) { c.Policy.UnknownPubrel = 0 }, "Policy.UnknownPubrel"},
		{"pubrec range", func(c *ClientConfig) { c.Policy.UnknownPubrec = 3 }, "Policy.UnknownPubrec"},
		{"ack order", func(c *ClientConfig) { c.Policy.AckOrder = 0 }, "Policy.AckOrder"},
		{"qos2", func(c *ClientConfig) { c.Policy.IncomingQoS2 = 9 }, "Policy.IncomingQoS2"},
		{"broker mutation", func(c *ClientConfig) { c.Policy.Mutations = MutAckBeforePersist }, "not client mutations"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := good
			c.edit(&cfg)
			err := cfg.Validate()
			if !errors.Is(err, ErrClientConfig) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Validate = %v, want ErrClientConfig mentioning %q", err, c.want)
			}
			if _, err := NewClient(cfg, nil); !errors.Is(err, ErrClientConfig) {
				t.Fatalf("NewClient accepted a bad config: %v", err)
			}
		})
	}
}

func TestPresets(t *testing.T) {
	want := []string{"legacy", "fixed", "legacy-retransmit", "legacy-pubrel", "legacy-ack-order", "volatile-qos2", "broker-nopersist", "broker-periodic"}
	all := Presets()
	if len(all) != len(want) {
		t.Fatalf("%d presets, want %d", len(all), len(want))
	}
	for i, p := range all {
		if p.Name != want[i] || p.Doc == "" {
			t.Errorf("preset %d = %q (doc %q), want %q with a doc", i, p.Name, p.Doc, want[i])
		}
		if err := DefaultClientConfig("c", p.Client).Validate(); err != nil {
			t.Errorf("preset %s: client policy invalid: %v", p.Name, err)
		}
		b := p.Broker
		if b.Persistence == 0 || b.UnknownPubrel == 0 || b.UnknownPubrec == 0 || b.AckOrder == 0 ||
			(b.Persistence == PersistPeriodic && b.SnapshotEvery < 1) {
			t.Errorf("preset %s: broker policy has an unset knob: %+v", p.Name, b)
		}
		got, err := PresetByName(p.Name)
		if err != nil || got.Name != p.Name {
			t.Errorf("PresetByName(%q) = %v, %v", p.Name, got.Name, err)
		}
	}
	legacy, fixed := all[0], all[1]
	if legacy.Client != presetLegacyClient || legacy.Broker.Persistence != LegacyPersistNone {
		t.Errorf("legacy is not every legacy knob: %+v", legacy)
	}
	if fixed.Client != presetFixedClient || fixed.Broker.Persistence != PersistEveryChange {
		t.Errorf("fixed is not every fix: %+v", fixed)
	}
	// each single-bug preset differs from fixed in exactly one knob
	for _, p := range all[2:] {
		diff := 0
		if p.Client.Retransmit != fixed.Client.Retransmit {
			diff++
		}
		if p.Client.UnknownPubrel != fixed.Client.UnknownPubrel {
			diff++ // legacy-pubrel also flips UnknownPubrec: one seed
		}
		if p.Client.AckOrder != fixed.Client.AckOrder {
			diff++
		}
		if p.Client.IncomingQoS2 != fixed.Client.IncomingQoS2 {
			diff++
		}
		if p.Broker.Persistence != fixed.Broker.Persistence {
			diff++
		}
		if diff != 1 {
			t.Errorf("preset %s differs from fixed in %d knobs", p.Name, diff)
		}
	}
	_, err := PresetByName("nope")
	if !errors.Is(err, ErrUnknownPreset) || !strings.Contains(err.Error(), "legacy-ack-order") {
		t.Fatalf("PresetByName(nope) = %v", err)
	}
}

func TestNewClientCorruptRecords(t *testing.T) {
	h := connected(t, fixedConfig(t), false)
	h.step(Publish{Cmd: 1, Topic: "t", Payload: []byte("p"), QoS: 2})
	good := h.store["out/00001"]
	cases := []struct {
		name string
		rec  Record
	}{
		{"unknown key", Record{Key: "junk", Value: []byte{1}}},
		{"bad out id", Record{Key: "out/0000x", Value: good}},
		{"zero id", Record{Key: "out/00000", Value: good}},
		{"empty value", Record{Key: "out/00001", Value: nil}},
		{"wrong kind", Record{Key: "out/00001", Value: []byte{clientRecIn, 1}}},
		{"truncated", Record{Key: "out/00001", Value: good[:len(good)-1]}},
		{"id mismatch", Record{Key: "out/00002", Value: good}},
		{"trailing bytes", Record{Key: "out/00001", Value: append(append([]byte{}, good...), 0)}},
		{"bad in", Record{Key: "in/00003", Value: []byte{clientRecIn}}},
		{"bad session", Record{Key: "session", Value: []byte{9}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := NewClient(h.cfg, []Record{c.rec})
			if !errors.Is(err, ErrClientRecord) || !strings.Contains(err.Error(), `"`+c.rec.Key+`"`) {
				t.Fatalf("NewClient = %v, want ErrClientRecord naming %q", err, c.rec.Key)
			}
		})
	}
	if _, err := NewClient(h.cfg, h.records()); err != nil {
		t.Fatalf("good records refused: %v", err)
	}
}

func TestRecordKeys(t *testing.T) {
	if clientOutKey(7) != "out/00007" || clientInKey(65535) != "in/65535" {
		t.Fatalf("keys: %s %s", clientOutKey(7), clientInKey(65535))
	}
	if clientOutKey(7) == clientInKey(7) {
		t.Fatal("the two directions' keys collide")
	}
	for _, s := range []string{"00000", "65536", "+0001", "1", "-0001"} {
		if _, ok := clientParseID(s); ok {
			t.Errorf("clientParseID(%q) accepted", s)
		}
	}
}
