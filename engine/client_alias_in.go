package engine

import "github.com/mqttlab/mqttlab/engine/packet"

// Topic aliases from the broker (MQTT 5.0 §3.3.2.3.4). A v5 client with
// ClientConfig.TopicAliasMaximum M > 0 announces M in CONNECT and accepts
// every alias 1..M [MQTT-3.3.2-10]: a PUBLISH with a Topic Name and an alias
// sets (or replaces) the alias's mapping; one with an empty Topic Name takes
// its topic from the mapping. The mappings belong to the connection: each
// new connection starts without any [MQTT-3.3.2-7]. An alias above M, any
// alias when M is 0 [MQTT-3.1.2-27], or an empty Topic Name with an alias
// not mapped on this connection is a Protocol Error: DISCONNECT 0x94 (Topic
// Alias invalid) or 0x82.

// resetAliasIn forgets the last connection's aliases [MQTT-3.3.2-7].
func (c *Client) resetAliasIn() {
	clear(c.aliasIn)
	c.aliasIn = c.aliasIn[:0]
}

// resolveAliasIn returns p with its topic resolved: p itself when it carries
// no alias, else a copy whose Topic is the alias's topic. A bad alias fails
// the connection and reports false.
func (c *Client) resolveAliasIn(p *packet.Publish) (*packet.Publish, bool) {
	if c.v != packet.V5 || !p.Props.Present.Has(packet.PropTopicAlias) {
		return p, true
	}
	a, max := p.Props.TopicAlias, c.cfg.TopicAliasMaximum
	switch {
	case max == 0:
		// [MQTT-3.1.2-27] the client announced no Topic Alias Maximum.
		c.protocolError(clientErr(packet.TopicAliasInvalid, "MQTT-3.1.2-27", "Topic Alias %d but the client allows none", a))
		return nil, false
	case a > max:
		// [MQTT-3.3.2-11] above the Topic Alias Maximum the client sent.
		c.protocolError(clientErr(packet.TopicAliasInvalid, "MQTT-3.3.2-11", "Topic Alias %d above the client's maximum %d", a, max))
		return nil, false
	}
	if len(p.Topic) > 0 {
		for len(c.aliasIn) < int(a) {
			c.aliasIn = append(c.aliasIn, "")
		}
		c.aliasIn[a-1] = string(p.Topic) // a new mapping, or a changed one
		return p, true
	}
	if int(a) > len(c.aliasIn) || c.aliasIn[a-1] == "" {
		// §3.3.4: an empty Topic Name with an alias that has no mapping.
		c.protocolError(clientErr(packet.ProtocolError, "§3.3.4", "Topic Alias %d has no topic on this connection", a))
		return nil, false
	}
	q := c.pubs.get()
	*q = *p
	q.Topic = []byte(c.aliasIn[a-1])
	return q, true
}
