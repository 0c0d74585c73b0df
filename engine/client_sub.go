package engine

import (
	"fmt"
	"slices"

	"github.com/mqttlab/mqttlab/engine/packet"
)

// clientRequest is a SUBSCRIBE or UNSUBSCRIBE awaiting its ack.
type clientRequest struct {
	id  uint16
	cmd CmdID
	typ packet.Type // SUBSCRIBE or UNSUBSCRIBE
	n   int         // filters: the ack must carry as many reason codes
}

// handleSubscribeCmd sends SUBSCRIBE with a fresh packet id [MQTT-2.2.1-3].
// It is never held back by the send quota [MQTT-3.3.4-8].
func (c *Client) handleSubscribeCmd(e Subscribe) {
	if len(e.Subs) == 0 {
		c.complete(e.Cmd, Failed, fmt.Errorf("%w: SUBSCRIBE without filters", ErrClientBadCommand))
		return
	}
	if err := c.checkSubscriptionID(e.SubscriptionID); err != nil {
		c.complete(e.Cmd, Failed, err)
		return
	}
	c.sendRequest(e.Cmd, packet.SUBSCRIBE, len(e.Subs), func(id uint16) packet.Packet {
		p := &packet.Subscribe{PacketID: id, Subs: slices.Clone(e.Subs)}
		if e.SubscriptionID != 0 {
			p.Props.SubscriptionIDs = []uint32{e.SubscriptionID} // §3.8.2.1.2
		}
		return p
	})
}

// maxSubscriptionID is the largest Subscription Identifier, the largest
// Variable Byte Integer (§3.8.2.1.2).
const maxSubscriptionID = 268435455

// checkSubscriptionID refuses a Subscription Identifier the client cannot
// send: any in 3.1.1, which has none, and one beyond the Variable Byte
// Integer's range.
func (c *Client) checkSubscriptionID(id uint32) error {
	switch {
	case id == 0:
		return nil
	case c.v != packet.V5:
		return fmt.Errorf("%w: Subscription Identifier needs Version 5", ErrClientBadCommand)
	case id > maxSubscriptionID:
		return fmt.Errorf("%w: Subscription Identifier %d above %d (§3.8.2.1.2)", ErrClientBadCommand, id, maxSubscriptionID)
	}
	return nil
}

// handleUnsubscribeCmd sends UNSUBSCRIBE with a fresh packet id.
func (c *Client) handleUnsubscribeCmd(e Unsubscribe) {
	if len(e.Filters) == 0 {
		c.complete(e.Cmd, Failed, fmt.Errorf("%w: UNSUBSCRIBE without filters", ErrClientBadCommand))
		return
	}
	c.sendRequest(e.Cmd, packet.UNSUBSCRIBE, len(e.Filters), func(id uint16) packet.Packet {
		return &packet.Unsubscribe{PacketID: id, Filters: slices.Clone(e.Filters)}
	})
}

// sendRequest allocates an id, encodes the clientRequest (an invalid one, or
// one too large for the broker [MQTT-3.2.2-15], fails the command, not the
// connection) and sends it.
func (c *Client) sendRequest(cmd CmdID, typ packet.Type, n int, build func(uint16) packet.Packet) {
	if c.state != csConnected {
		c.complete(cmd, Failed, ErrClientNotConnected)
		return
	}
	id, err := c.out.ids.Alloc()
	if err != nil {
		c.complete(cmd, Failed, err)
		return
	}
	p := build(id)
	data, err := c.encode(p)
	if err != nil {
		c.out.ids.Free(id)
		c.complete(cmd, Failed, fmt.Errorf("%w: %w", ErrClientBadCommand, err))
		return
	}
	if err := c.tooLarge(typ, len(data)); err != nil {
		c.out.ids.Free(id)
		c.complete(cmd, Failed, err) // [MQTT-3.2.2-15]
		return
	}
	c.reqs = append(c.reqs, &clientRequest{id: id, cmd: cmd, typ: typ, n: n})
	c.sendBytes(data, p)
}

// takeRequest removes and returns the pending clientRequest of type typ with id.
func (c *Client) takeRequest(typ packet.Type, id uint16) *clientRequest {
	for i, r := range c.reqs {
		if r.id == id && r.typ == typ {
			c.reqs = slices.Delete(c.reqs, i, i+1)
			if c.out.byID.get(id) == nil {
				c.out.ids.Free(id)
			}
			return r
		}
	}
	return nil
}

// handleSuback completes a Subscribe with one reason code per filter.
func (c *Client) handleSuback(p *packet.Suback) {
	r := c.takeRequest(packet.SUBSCRIBE, p.PacketID)
	if r == nil {
		return // a SUBACK for nothing pending: ignored
	}
	if len(p.Reasons) != r.n {
		// [MQTT-3.8.4-6] one reason code per topic filter.
		c.complete(r.cmd, Failed, ErrClientProtocol)
		c.protocolError(clientErr(packet.ProtocolError, "MQTT-3.8.4-6", "SUBACK has %d codes for %d filters", len(p.Reasons), r.n))
		return
	}
	c.emit(Complete{Cmd: r.cmd, Result: Acknowledged, Reasons: slices.Clone(p.Reasons)})
}

// handleUnsuback completes an Unsubscribe (v5: one reason code per filter).
func (c *Client) handleUnsuback(p *packet.Unsuback) {
	r := c.takeRequest(packet.UNSUBSCRIBE, p.PacketID)
	if r == nil {
		return
	}
	if c.v == packet.V5 && len(p.Reasons) != r.n {
		// [MQTT-3.10.4-5] one reason code per topic filter.
		c.complete(r.cmd, Failed, ErrClientProtocol)
		c.protocolError(clientErr(packet.ProtocolError, "MQTT-3.10.4-5", "UNSUBACK has %d codes for %d filters", len(p.Reasons), r.n))
		return
	}
	c.emit(Complete{Cmd: r.cmd, Result: Acknowledged, Reasons: slices.Clone(p.Reasons)})
}

// failRequests fails every pending clientRequest: the connection closed.
func (c *Client) failRequests(err error) {
	reqs := c.reqs
	c.reqs = nil
	for _, r := range reqs {
		if c.out.byID.get(r.id) == nil {
			c.out.ids.Free(r.id)
		}
		c.complete(r.cmd, Failed, err)
	}
}
