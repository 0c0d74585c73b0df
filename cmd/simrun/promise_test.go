package main

import (
	"strings"
	"testing"

	"github.com/mqttlab/mqttlab/model"
)

// TestParsePromise: the plain form is one policy for every role; the
// per-role form gives the broker, subscribers, publishers and single
// clients their own, the most specific entry winning.
func TestParsePromise(t *testing.T) {
	fixed := model.FixedPolicy()
	mosq := fixed
	mosq.Retransmit, mosq.QoS2Durable, mosq.AckBeforeCallback = model.RetransmitMemory, false, true
	periodic := fixed
	periodic.Broker = model.PersistPeriodic
	mem := fixed
	mem.Retransmit, mem.QoS2Durable = model.RetransmitMemory, false
	noDedup := fixed
	noDedup.QoS2NoDedup = true
	pahoGo := fixed
	pahoGo.QoS2Durable, pahoGo.QoS2NoDedup = false, true
	tests := []struct {
		in         string
		broker     model.Policy
		s1, s2, p1 model.Policy // For(id)'s client fields
		roles      string
	}{
		{"spec", fixed, fixed, fixed, fixed, "every role: spec"},
		{"broker-periodic,mosquitto-clients", func() model.Policy { p := mosq; p.Broker = model.PersistPeriodic; return p }(),
			mosq, mosq, mosq, "every role: broker-periodic,mosquitto-clients"},
		{"broker=broker-periodic;subscribers=mosquitto-clients;publishers=spec", periodic, mosq, mosq, fixed,
			"broker: broker-periodic|subscribers: mosquitto-clients|publishers: spec"},
		{"subscribers=mosquitto-clients", fixed, mosq, mosq, fixed,
			"broker: spec|subscribers: mosquitto-clients|publishers: spec"},
		// s1 beats subscribers, subscribers beat clients, whatever the order.
		{"s1=client-memory;subscribers=mosquitto-clients;clients=client-ack-first", fixed, mem, mosq,
			func() model.Policy { p := fixed; p.AckBeforeCallback = true; return p }(),
			"broker: spec|subscribers: mosquitto-clients|publishers: client-ack-first|s1: client-memory"},
		{"subscribers=client-no-dedup", fixed, noDedup, noDedup, fixed,
			"broker: spec|subscribers: client-no-dedup|publishers: spec"},
		// paho-go's profile does not suppress QoS 2 duplicates; spec after it takes that back.
		{"subscribers=paho-go;s2=paho-go,spec", fixed, pahoGo, fixed, fixed,
			"broker: spec|subscribers: paho-go|publishers: spec|s2: paho-go,spec"},
	}
	for _, tc := range tests {
		ps, roles, err := parsePromise(tc.in, 2, 2)
		if err != nil {
			t.Errorf("%q: %v", tc.in, err)
			continue
		}
		for _, c := range []struct {
			id   string
			want model.Policy
		}{{"s1", tc.s1}, {"s2", tc.s2}, {"p1", tc.p1}} {
			got := ps.For(c.id)
			want := c.want
			want.Broker, want.BrokerUnknownAck, want.BrokerAckBeforeStore = tc.broker.Broker, tc.broker.BrokerUnknownAck, tc.broker.BrokerAckBeforeStore
			if got != want {
				t.Errorf("%q: %s judged by %+v, want %+v", tc.in, c.id, got, want)
			}
		}
		if got := strings.Join(roles, "|"); got != tc.roles {
			t.Errorf("%q: roles %q, want %q", tc.in, got, tc.roles)
		}
	}
}

// TestParsePromiseErrors: every malformed -promise names its problem.
func TestParsePromiseErrors(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"forever", `unknown promise set "forever"`},
		{"broker=mosquitto-clients", "edits client promises"},
		{"subscribers=broker-periodic", "edits broker promises"},
		{"s9=spec", `unknown role "s9"`},
		{"brokers=spec", `unknown role "brokers"`},
		{"broker=spec;broker=broker-sync", "given twice"},
		{"broker=", "want ROLE=SETS"},
		{"subscribers=nope", `subscribers: unknown promise set "nope"`},
	} {
		_, _, err := parsePromise(c.in, 2, 2)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want it to say %q", c.in, err, c.want)
		}
	}
}
