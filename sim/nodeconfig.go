package sim

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/mqttlab/mqttlab/engine"
	"github.com/mqttlab/mqttlab/engine/packet"
)

// NodeConfig is what a "node" op declares of one node: for a client its
// protocol version, session, flow-control windows, keep-alive, packet size
// and will; for the broker its windows and packet size. A zero field keeps
// the world's default (the run's version, a session that never expires,
// the scenario's keep-alive, the engine's windows and sizes, no will).
//
// Text form (the op's arguments, each optional): v=4|5 expiry=N|never
// clean rm=N window=N ka=N maxsize=N startid=N aliases=N
// will=TOPIC:QOS:RETAIN:DELAY, and for the broker only queue=N
// queuefull=drop-oldest|drop-newest maxka=N shared subids
// acl=USER:ACCESS:FILTER,... (the broker takes startid and aliases too), and
// for a client only user=NAME.
type NodeConfig struct {
	Version uint8 // 4 or 5; 0: the run's (Config.Version)
	// Expiry is the v5 Session Expiry Interval in seconds when HasExpiry
	// (0: the session ends with its connection); without HasExpiry the
	// session never expires (v5) or outlives its connection (3.1.1).
	Expiry    uint32
	HasExpiry bool
	// Clean: every Connect starts clean (3.1.1 Clean Session 1, v5 Clean
	// Start 1).
	Clean      bool
	ReceiveMax uint16 // v5 Receive Maximum the node announces; 0: default
	Window     uint16 // 3.1.1 inflight window (client: its send quota; broker: its window per 3.1.1 client); 0: default
	KeepAlive  uint16 // client keep-alive in seconds; 0: the scenario's
	MaxSize    uint32 // Maximum Packet Size the node accepts; 0: default
	// StartID is where the node's packet-id counter starts (a client's
	// ClientConfig.StartPacketID, each new broker session's
	// BrokerConfig.StartPacketID); 0: ids start at 1. The wrap dimension
	// sets it near 65535 so the 16-bit ids wrap after a few packets.
	StartID uint16
	Will    *WillConfig
	// Queue is the broker's bound on the messages queued per session
	// (BrokerConfig.MaxQueued); 0: default. A bound set here is declared to
	// the model (model.BrokerLimits), which excuses the drops it allows
	// (World.brokerLimits). The queue dimension draws a small one; the long
	// wrap raises it.
	Queue uint32
	// QueueFull is which copy the broker drops at that bound
	// (BrokerConfig.QueueFull); 0: the default, drop-oldest.
	QueueFull engine.QueueFull
	// MaxKeepAlive is the broker's longest Keep Alive in seconds
	// (BrokerConfig.MaxKeepAlive, max_keepalive); 0: no limit. A v5 client
	// asking more is told it as Server Keep Alive [MQTT-3.2.2-21]; a 3.1.1
	// client asking more (or none) is refused.
	MaxKeepAlive uint16
	// Shared and SubIDs turn on the broker's v5 shared subscriptions
	// (BrokerConfig.SharedSubscriptions) and Subscription Identifiers
	// (BrokerConfig.SubscriptionIDs), off by default.
	Shared, SubIDs bool
	// Aliases is, for a v5 client, the Topic Alias Maximum it announces
	// (ClientConfig.TopicAliasMaximum; a 3.1.1 client has none and ignores
	// it), for the broker the most topic aliases it assigns per connection
	// (BrokerConfig.TopicAliasesOut); 0: none, as by default.
	Aliases uint16
	// User, for a client, is the user name its CONNECTs carry, with the
	// user name as password (engine.ClientConfig.Username); "": anonymous.
	User string
	// ACL, for the broker, is its access control (BrokerConfig.Access,
	// swarm_access.go): USER:ACCESS:FILTER rules joined by ',' (USER ""
	// for the anonymous section, ACCESS read|write|readwrite|deny); each
	// user it names logs in with its name as password; anonymous clients
	// are let in. "": no ACL.
	ACL string
}

// WillConfig is a client's will: the sim names each connection's will
// message (its payload) "<client>-w<n>", n counting the client's Connects.
type WillConfig struct {
	Topic  string
	QoS    uint8
	Retain bool
	Delay  uint32 // v5 Will Delay Interval, seconds
}

// persistent reports whether a session of this config outlives outages of
// any length: no clean start, and (v5) no finite expiry.
func (c *NodeConfig) persistent(version uint8) bool {
	if c == nil {
		return true
	}
	return !c.Clean && (version == 4 || !c.HasExpiry)
}

// appendText appends the config's arguments (" key=value" each) to b.
func (c *NodeConfig) appendText(b []byte) []byte {
	if c == nil {
		return b
	}
	num := func(key string, v uint64) {
		if v != 0 {
			b = append(b, ' ')
			b = append(b, key...)
			b = append(b, '=')
			b = strconv.AppendUint(b, v, 10)
		}
	}
	num("v", uint64(c.Version))
	if c.HasExpiry {
		b = append(b, " expiry="...)
		b = strconv.AppendUint(b, uint64(c.Expiry), 10)
	}
	if c.Clean {
		b = append(b, " clean"...)
	}
	num("rm", uint64(c.ReceiveMax))
	num("window", uint64(c.Window))
	num("ka", uint64(c.KeepAlive))
	num("maxsize", uint64(c.MaxSize))
	num("startid", uint64(c.StartID))
	num("queue", uint64(c.Queue))
	if c.QueueFull != 0 {
		b = append(b, " queuefull="...)
		b = append(b, c.QueueFull.String()...)
	}
	num("maxka", uint64(c.MaxKeepAlive))
	num("aliases", uint64(c.Aliases))
	if c.Shared {
		b = append(b, " shared"...)
	}
	if c.SubIDs {
		b = append(b, " subids"...)
	}
	if c.User != "" {
		b = append(b, " user="...)
		b = append(b, c.User...)
	}
	if c.ACL != "" {
		b = append(b, " acl="...)
		b = append(b, c.ACL...)
	}
	if w := c.Will; w != nil {
		b = append(b, " will="...)
		b = append(b, w.Topic...)
		b = append(b, ':')
		b = strconv.AppendUint(b, uint64(w.QoS), 10)
		b = append(b, ':')
		b = strconv.AppendBool(b, w.Retain)
		b = append(b, ':')
		b = strconv.AppendUint(b, uint64(w.Delay), 10)
	}
	return b
}

// parseArg reads one argument of a node op into c.
func (c *NodeConfig) parseArg(a string) error {
	key, val, hasVal := strings.Cut(a, "=")
	if !hasVal {
		switch key {
		case "clean":
			c.Clean = true
		case "shared":
			c.Shared = true
		case "subids":
			c.SubIDs = true
		default:
			return fmt.Errorf("node does not take argument %q (flags: clean, shared, subids)", a)
		}
		return nil
	}
	num := func(bits int) (uint64, error) {
		n, err := strconv.ParseUint(val, 10, bits)
		if err != nil {
			return 0, fmt.Errorf("node %s: %q is not a %d-bit unsigned integer", key, val, bits)
		}
		return n, nil
	}
	var n uint64
	var err error
	switch key {
	case "v":
		if n, err = num(8); err == nil && n != 4 && n != 5 {
			err = fmt.Errorf("node v=%d is not 4 or 5", n)
		}
		c.Version = uint8(n)
	case "expiry":
		c.HasExpiry = true
		n, err = num(32)
		c.Expiry = uint32(n)
	case "rm":
		n, err = num(16)
		c.ReceiveMax = uint16(n)
	case "window":
		n, err = num(16)
		c.Window = uint16(n)
	case "ka":
		n, err = num(16)
		c.KeepAlive = uint16(n)
	case "maxsize":
		n, err = num(32)
		c.MaxSize = uint32(n)
	case "startid":
		n, err = num(16)
		c.StartID = uint16(n)
	case "will":
		c.Will, err = parseWill(val)
	case "queue":
		n, err = num(31)
		c.Queue = uint32(n)
	case "aliases":
		n, err = num(16)
		c.Aliases = uint16(n)
	case "queuefull":
		switch val {
		case engine.DropOldest.String():
			c.QueueFull = engine.DropOldest
		case engine.DropNewest.String():
			c.QueueFull = engine.DropNewest
		default:
			err = fmt.Errorf("node queuefull=%q is not %s or %s", val, engine.DropOldest, engine.DropNewest)
		}
	case "maxka":
		n, err = num(16)
		c.MaxKeepAlive = uint16(n)
	case "user":
		if val == "" {
			err = fmt.Errorf("node user= names no user")
		}
		c.User = val
	case "acl":
		if _, err = parseACL(val); err == nil {
			c.ACL = val
		}
	default:
		return fmt.Errorf("node does not take argument %q (known: v, expiry, clean, rm, window, ka, maxsize, startid, will, queue, queuefull, maxka, shared, subids, aliases, user, acl)", a)
	}
	return err
}

// parseWill reads TOPIC:QOS:RETAIN:DELAY.
func parseWill(s string) (*WillConfig, error) {
	f := strings.Split(s, ":")
	if len(f) != 4 || f[0] == "" {
		return nil, fmt.Errorf("node will=%q is not TOPIC:QOS:RETAIN:DELAY", s)
	}
	q, err1 := strconv.ParseUint(f[1], 10, 8)
	r, err2 := strconv.ParseBool(f[2])
	d, err3 := strconv.ParseUint(f[3], 10, 32)
	if err1 != nil || err2 != nil || err3 != nil || q > 2 {
		return nil, fmt.Errorf("node will=%q is not TOPIC:QOS(0-2):RETAIN(true|false):DELAY(seconds)", s)
	}
	return &WillConfig{Topic: f[0], QoS: uint8(q), Retain: r, Delay: uint32(d)}, nil
}

// clientConfig applies the node config to an engine client config.
func (c *NodeConfig) clientConfig(cfg *engine.ClientConfig) {
	if c == nil {
		return
	}
	if c.HasExpiry {
		cfg.SessionExpiry = c.Expiry
	}
	cfg.CleanStart = c.Clean
	if c.ReceiveMax != 0 {
		cfg.ReceiveMaximum = c.ReceiveMax
	}
	if c.Window != 0 {
		cfg.InflightWindow = c.Window
	}
	if c.KeepAlive != 0 {
		cfg.KeepAlive = c.KeepAlive
	}
	if c.MaxSize != 0 {
		cfg.MaxPacketSize = c.MaxSize
	}
	cfg.StartPacketID = c.StartID
	if c.User != "" {
		cfg.Username, cfg.Password = c.User, []byte(c.User)
	}
	if cfg.Version == packet.V5 {
		cfg.TopicAliasMaximum = c.Aliases
	}
}

// brokerConfig applies the node config to the broker's engine config.
func (c *NodeConfig) brokerConfig(cfg *engine.BrokerConfig) {
	if c == nil {
		return
	}
	if c.ReceiveMax != 0 {
		cfg.ReceiveMaximum = c.ReceiveMax
	}
	if c.Window != 0 {
		cfg.InflightV311 = c.Window
	}
	if c.MaxSize != 0 {
		cfg.MaxPacketSize = c.MaxSize
	}
	if c.Queue != 0 {
		cfg.MaxQueued = int(c.Queue)
	}
	if c.QueueFull != 0 {
		cfg.QueueFull = c.QueueFull
	}
	cfg.MaxKeepAlive = c.MaxKeepAlive
	cfg.StartPacketID = c.StartID
	cfg.SharedSubscriptions = cfg.SharedSubscriptions || c.Shared
	cfg.SubscriptionIDs = cfg.SubscriptionIDs || c.SubIDs
	if c.Aliases != 0 {
		cfg.TopicAliasesOut = c.Aliases
	}
	if c.ACL != "" {
		cfg.Access = brokerAccess(c.ACL)
	}
}
