package engine

import (
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/mqttlab/mqttlab/engine/packet"
)

// ErrClientConfig is the sentinel every client configuration error wraps.
var ErrClientConfig = errors.New("engine: invalid client config")

// clientMaxPacketSizeLimit is the largest packet MQTT can express (§2.1.4: a
// remaining length of 268,435,455 plus a five-byte fixed header).
const clientMaxPacketSizeLimit = 268_435_460

// ClientConfig configures a Client. Every field is validated by NewClient.
type ClientConfig struct {
	// ClientID is the client identifier sent in CONNECT; it must be non-empty
	// valid UTF-8 of at most 65535 bytes (an empty id cannot resume a session).
	ClientID string
	// Version is the protocol level: packet.V311 (4) or packet.V5 (5).
	Version packet.Version
	// CleanStart is the default Clean Start (CleanSession in 3.1.1). A
	// Connect command with CleanStart=true forces a clean start whatever this
	// says; with CleanStart=false this default applies.
	CleanStart bool
	// KeepAlive is the keep-alive interval in seconds; 0 disables PINGREQ.
	// A v5 CONNACK Server Keep Alive overrides it [MQTT-3.2.2-21].
	KeepAlive uint16
	// SessionExpiry is the v5 Session Expiry Interval in seconds (0: the
	// session ends at close; 0xFFFFFFFF: never). It must be 0 in 3.1.1.
	SessionExpiry uint32
	// ReceiveMaximum is the v5 Receive Maximum the client announces: how many
	// incoming QoS 1/2 PUBLISHes the broker may have unacknowledged. 1..65535.
	ReceiveMaximum uint16
	// TopicAliasMaximum is the v5 Topic Alias Maximum the client announces:
	// the broker may name topics by aliases 1..TopicAliasMaximum on its
	// PUBLISHes (0, the default: none). It must be 0 in 3.1.1.
	TopicAliasMaximum uint16
	// InflightWindow is the 3.1.1 send quota: how many outgoing QoS 1/2
	// PUBLISHes may be unacknowledged at once (v5 uses the broker's Receive
	// Maximum instead). 1..65535.
	InflightWindow uint16
	// MaxPacketSize is the largest packet the client accepts (announced in v5
	// CONNECT, enforced by the decoder). 64..268,435,460.
	MaxPacketSize uint32
	// PingTimeout is how long the client waits for PINGRESP before closing
	// the connection. Must be > 0.
	PingTimeout Duration
	// ConnackTimeout is how long the client waits for CONNACK after the
	// connection opens before closing it. Must be > 0.
	ConnackTimeout Duration
	// StartPacketID is where the packet-id counter starts: the first id
	// handed out is the lowest free one above it (0, the default: 1). Near
	// 65535 it makes the counter wrap to 1 after a few packets instead of
	// 65,535, as a test of the wrap-around wants [MQTT-2.2.1-3]. A client
	// restored with messages in flight continues after the last of them.
	StartPacketID uint16
	// Will is the will message every CONNECT carries (nil: none); a
	// Connect command's Will replaces it for that attempt.
	Will *Will
	// Username and Password, when Username is not empty, are the
	// credentials every CONNECT carries (a broker's BrokerConfig.Access
	// authenticates them); an empty Username connects anonymously.
	Username string
	Password []byte
	// Policy selects the seed behaviours.
	Policy ClientPolicy
	// ReuseActions says the caller is done with every Action a Step
	// returned before it calls Step again: the engine then boxes the next
	// Step's actions in the same memory instead of fresh memory. Only the
	// boxes are reused; the bytes, packets, strings and messages the
	// actions point to are never written again either way (the sim's
	// worlds set it; a driver that keeps Actions must not).
	ReuseActions bool
}

// DefaultClientConfig returns a valid v5 configuration for id with the given
// policy: keep alive 60 s, Receive Maximum and inflight window 65535,
// maximum packet size 1 MiB, ping and CONNACK timeouts 10 s, persistent
// session (CleanStart=false, Session Expiry 0xFFFFFFFF).
func DefaultClientConfig(id string, p ClientPolicy) ClientConfig {
	return ClientConfig{
		ClientID:       id,
		Version:        packet.V5,
		KeepAlive:      60,
		SessionExpiry:  0xFFFFFFFF,
		ReceiveMaximum: 65535,
		InflightWindow: 65535,
		MaxPacketSize:  1 << 20,
		PingTimeout:    10 * Second,
		ConnackTimeout: 10 * Second,
		Policy:         p,
	}
}

// Validate reports the first problem of the configuration, wrapping
// ErrClientConfig, or nil.
func (c ClientConfig) Validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: "+format, append([]any{ErrClientConfig}, args...)...)
	}
	switch {
	case c.ClientID == "":
		return bad("ClientID is empty")
	case len(c.ClientID) > 65535:
		return bad("ClientID is %d bytes; at most 65535", len(c.ClientID))
	case !utf8.ValidString(c.ClientID):
		return bad("ClientID %q is not valid UTF-8", c.ClientID)
	case c.Version != packet.V311 && c.Version != packet.V5:
		return bad("Version %d is neither 4 (3.1.1) nor 5 (5.0)", c.Version)
	case c.Version == packet.V311 && c.SessionExpiry != 0:
		return bad("SessionExpiry %d needs Version 5", c.SessionExpiry)
	case c.Version == packet.V311 && c.TopicAliasMaximum != 0:
		return bad("TopicAliasMaximum %d needs Version 5", c.TopicAliasMaximum)
	case c.ReceiveMaximum == 0:
		return bad("ReceiveMaximum is 0; it must be 1..65535")
	case c.InflightWindow == 0:
		return bad("InflightWindow is 0; it must be 1..65535")
	case c.MaxPacketSize < 64 || c.MaxPacketSize > clientMaxPacketSizeLimit:
		return bad("MaxPacketSize %d is outside 64..%d", c.MaxPacketSize, clientMaxPacketSizeLimit)
	case c.PingTimeout <= 0:
		return bad("PingTimeout %d must be > 0", c.PingTimeout)
	case c.ConnackTimeout <= 0:
		return bad("ConnackTimeout %d must be > 0", c.ConnackTimeout)
	}
	if c.Will != nil {
		if err := c.Will.validate(c.Version); err != nil {
			return bad("%v", err)
		}
	}
	return c.Policy.validate(bad)
}

// validate checks each knob is set and in range.
func (p ClientPolicy) validate(bad func(string, ...any) error) error {
	switch {
	case p.Retransmit < LegacyRetransmitNone || p.Retransmit > RetransmitDurable:
		return bad("Policy.Retransmit %d is not a RetransmitStore (1..3)", p.Retransmit)
	case p.UnknownPubrel < LegacyUnknownAckFail || p.UnknownPubrel > UnknownAckAnswer:
		return bad("Policy.UnknownPubrel %d is not an UnknownAck (1..2)", p.UnknownPubrel)
	case p.UnknownPubrec < LegacyUnknownAckFail || p.UnknownPubrec > UnknownAckAnswer:
		return bad("Policy.UnknownPubrec %d is not an UnknownAck (1..2)", p.UnknownPubrec)
	case p.AckOrder < LegacyAckBeforeCallback || p.AckOrder > AckAfterCallback:
		return bad("Policy.AckOrder %d is not an AckOrder (1..2)", p.AckOrder)
	case p.IncomingQoS2 < LegacyQoS2Volatile || p.IncomingQoS2 > QoS2Durable:
		return bad("Policy.IncomingQoS2 %d is not a QoS2State (1..2)", p.IncomingQoS2)
	case p.Mutations&^clientMutations != 0:
		return bad("Policy.Mutations %#x has bits that are not client mutations", uint64(p.Mutations&^clientMutations))
	}
	return nil
}

// clientMutations are the mutations the client implements.
const clientMutations = MutDeleteBeforeUpdate | MutResendWithoutDup | MutReuseInflightID | MutPublishAfterPubrel | MutPacketIDZero | MutKeepAliveOnReceive | MutExhaustedReuse | MutRepublishLostQoS2 | MutIgnoreBrokerMaxSize | MutIgnoreServerKeepAlive
