package engine

import (
	"strings"

	"github.com/mqttlab/mqttlab/engine/packet"
)

// admit authenticates a CONNECT against the broker's Access and applies its
// Keep Alive limit to a 3.1.1 client; it refuses the connection (CONNACK
// with the version's code, then close) and returns false when either fails.
func (b *Broker) admit(c *brokerConn, p *packet.Connect) bool {
	v5 := p.Version == packet.V5
	switch b.cfg.Access.authenticate(p.HasUsername, p.Username, p.HasPassword, p.Password) {
	case accessBadCredentials:
		// v5 0x86 Bad User Name or Password; 3.1.1 return code 0x04.
		b.refuse(c, pick(v5, packet.BadUserNameOrPassword, packet.V3BadUsernameOrPassword), "bad user name or password")
		return false
	case accessNotAuthorized:
		// v5 0x87 Not authorized; 3.1.1 return code 0x05.
		b.refuse(c, pick(v5, packet.NotAuthorized, packet.V3NotAuthorized), "no user name and anonymous access is off")
		return false
	}
	c.who = accessClient{known: true, user: p.Username, anonymous: !p.HasUsername, clientID: p.ClientID}
	if max := b.cfg.MaxKeepAlive; max > 0 && !v5 && (p.KeepAlive == 0 || p.KeepAlive > max) {
		// 3.1.1 cannot be told a Server Keep Alive: refuse as mosquitto's
		// max_keepalive does, with 0x02 Identifier rejected.
		b.refuse(c, packet.V3IdentifierRejected, "Keep Alive above the broker's maximum")
		return false
	}
	return true
}

// keepAliveFor returns the Keep Alive in force on the connection: the
// client's, or the broker's MaxKeepAlive when the client asked for more or
// for none, which CONNACK then announces as Server Keep Alive (v5).
func (b *Broker) keepAliveFor(c *brokerConn, p *packet.Connect) uint16 {
	max := b.cfg.MaxKeepAlive
	if max == 0 || p.Version != packet.V5 || (p.KeepAlive > 0 && p.KeepAlive <= max) {
		return p.KeepAlive
	}
	c.serverKA = max // [MQTT-3.2.2-21] [MQTT-3.2.2-22]
	return max
}

// mayPublish reports whether the connection's client may publish to topic.
func (b *Broker) mayPublish(c *brokerConn, topic []byte) bool {
	return b.cfg.Access.allowed(c.who, string(topic), ACLWrite, true)
}

// mayReceive reports whether the session's client may receive a message
// on topic (mosquitto checks read access per message, so a subscription
// wider than a deny rule gets nothing the rule denies). A session restored
// after a broker restart is not checked until its client connects again: its
// subscriptions were checked when they were made.
func (b *Broker) mayReceive(s *brokerSession, topic []byte) bool {
	if b.cfg.Access == nil || !s.who.known {
		return true
	}
	return b.cfg.Access.allowed(s.who, string(topic), ACLRead, true)
}

// refusePublish answers a v5 PUBLISH the client may not send: PUBACK or
// PUBREC 0x87 Not authorized (a PUBREC of 0x80 or more ends the QoS 2 flow,
// §4.3.3), nothing for QoS 0; the message goes nowhere. (A 3.1.1 client has
// no way to be told: handlePublish acknowledges as usual and drops it.)
func (b *Broker) refusePublish(c *brokerConn, p *packet.Publish) {
	if p.QoS > 0 {
		b.sendNow(c, b.pkts.ack(ackType(p), p.PacketID, packet.NotAuthorized))
	}
}

// maySubscribe reports whether the connection's client may subscribe to
// filter. MutACLWildcardSubscribe (a canary) lets every filter with a
// wildcard through unchecked.
func (b *Broker) maySubscribe(c *brokerConn, filter string) bool {
	if b.pol.Mutations&MutACLWildcardSubscribe != 0 && strings.ContainsAny(filter, "+#") {
		return true
	}
	if inner, ok := sharedFilter(filter); ok && c.version == packet.V5 {
		filter = inner // a shared subscription reads the topics of its filter
	}
	return b.cfg.Access.allowed(c.who, filter, ACLRead, false)
}

// pick returns the v5 or the 3.1.1 reason code.
func pick(v5 bool, v5code, v3code packet.ReasonCode) packet.ReasonCode {
	if v5 {
		return v5code
	}
	return v3code
}
