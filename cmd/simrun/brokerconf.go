package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/mqttlab/mqttlab/engine"
)

// errBrokerConfig is wrapped by every refusal of a broker config file; the
// message names the file, the line and the key.
var errBrokerConfig = errors.New("bad broker config")

// brokerConfDoc documents the config file of simrun broker -config.
const brokerConfDoc = `A broker config file has one "key value" a line (# starts a comment):

  preset NAME                      engine preset whose broker policy to run (as -preset)
  persistence every|periodic|none  when the broker writes its state (every: before each ack)
  snapshot_every N                 periodic persistence: every N changes
  max_packet_size N                largest packet accepted (announced in v5 CONNACK)
  receive_maximum N                v5 clients' unacknowledged QoS 1/2 PUBLISHes (CONNACK)
  max_inflight_v311 N              outbound window of a 3.1.1 client
  max_queued_messages N            per-session queue bound
  queue_full drop-oldest|drop-newest
  topic_alias_maximum N            topic aliases a v5 client may use (0: none)
  topic_aliases_out N              topic aliases the broker assigns on its PUBLISHes to each
                                   v5 client, within the client's Topic Alias Maximum
                                   (0, the default: none; a full table reuses the least
                                   recently used alias)
  max_keepalive N                  longest Keep Alive, seconds (0: no limit)
  allow_anonymous true|false       CONNECT without a user name (default true)
  password_file PATH               mosquitto_passwd file (relative paths: to the config file)
  acl_file PATH                    mosquitto ACL file (user, topic, pattern lines)
  shared_subscriptions true|false  $share/{group}/{filter} (MQTT 5.0 §4.8.2; default true).
                                   3.1.1 has no shared subscriptions: a 3.1.1 client's
                                   $share/ filter is refused (SUBACK 0x80), never granted
  subscription_identifiers true|false  v5 Subscription Identifiers (§3.8.2.1.2; default true)
  connect_timeout SECONDS          close a connection that sent no CONNECT this long after it
                                   opened (default 10, as HiveMQ; 0: no limit)
  max_connections N                connections open at once; more are closed at accept
                                   (default: the open-file soft limit less 64; 0: no limit)`

// driverLimits are the config file's limits that the TCP driver
// (live.ServeBroker) enforces, not the engine: zero values keep live's
// defaults.
type driverLimits struct {
	connectTimeout time.Duration // negative: none
	maxConnections int           // negative: none
}

// loadBrokerConfig reads a broker config file on top of cfg (the -preset
// flag's), ignoring the driver's limits.
func loadBrokerConfig(path string, cfg engine.BrokerConfig) (engine.BrokerConfig, error) {
	cfg, _, err := loadBrokerFile(path, cfg)
	return cfg, err
}

// loadBrokerFile reads a broker config file on top of cfg (the -preset
// flag's): the engine's configuration and the driver's limits. Every
// refusal wraps errBrokerConfig and names line and key.
func loadBrokerFile(path string, cfg engine.BrokerConfig) (engine.BrokerConfig, driverLimits, error) {
	var lim driverLimits
	text, err := os.ReadFile(path)
	if err != nil {
		return cfg, lim, fmt.Errorf("%w: %v", errBrokerConfig, err)
	}
	anonymous := true
	for n, line := range strings.Split(string(text), "\n") {
		line, _, _ = strings.Cut(line, "#")
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		bad := func(format string, args ...any) error {
			return fmt.Errorf("%w: %s:%d: key %q: %s", errBrokerConfig, path, n+1, f[0], fmt.Sprintf(format, args...))
		}
		if len(f) != 2 {
			return cfg, lim, bad("want one value, got %d", len(f)-1)
		}
		if handled, err := setDriverKey(&lim, f[0], f[1]); handled {
			if err != nil {
				return cfg, lim, bad("%v", err)
			}
			continue
		}
		if err := setBrokerKey(&cfg, &anonymous, filepath.Dir(path), f[0], f[1]); err != nil {
			return cfg, lim, bad("%v", err)
		}
	}
	if cfg.Access != nil {
		cfg.Access.Anonymous = anonymous
	} else if !anonymous {
		cfg.Access = &engine.Access{} // no users: only anonymous clients could come, and they may not
	}
	if err := cfg.Validate(); err != nil {
		return cfg, lim, fmt.Errorf("%w: %s: %v", errBrokerConfig, path, err)
	}
	return cfg, lim, nil
}

// setDriverKey applies key if it is one of the driver's limits (handled
// true), leaving the engine's keys to setBrokerKey.
func setDriverKey(lim *driverLimits, key, v string) (handled bool, err error) {
	n, err := strconv.ParseUint(v, 10, 31)
	switch key {
	case "connect_timeout":
		if err != nil || n > 86400 {
			return true, fmt.Errorf("%q is not a number of seconds in 0..86400", v)
		}
		lim.connectTimeout = time.Duration(n) * time.Second
		if n == 0 {
			lim.connectTimeout = -1
		}
	case "max_connections":
		if err != nil || n > 1<<24 {
			return true, fmt.Errorf("%q is not a number in 0..%d", v, 1<<24)
		}
		lim.maxConnections = int(n)
		if n == 0 {
			lim.maxConnections = -1
		}
	default:
		return false, nil
	}
	return true, nil
}

// setBrokerKey applies one key of the config file.
func setBrokerKey(cfg *engine.BrokerConfig, anonymous *bool, dir, key, v string) error {
	num := func(max uint64) (uint64, error) {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil || n > max {
			return 0, fmt.Errorf("%q is not a number in 0..%d", v, max)
		}
		return n, nil
	}
	flag := func() (bool, error) {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return false, fmt.Errorf("%q is not true or false", v)
		}
		return b, nil
	}
	var err error
	var n uint64
	var b bool
	switch key {
	case "preset":
		var p engine.Preset
		if p, err = engine.PresetByName(v); err == nil {
			cfg.Policy = p.Broker
		}
	case "persistence":
		m := map[string]engine.BrokerPersistence{"every": engine.PersistEveryChange, "periodic": engine.PersistPeriodic, "none": engine.LegacyPersistNone}
		p, ok := m[v]
		if !ok {
			return fmt.Errorf("%q is not every, periodic or none", v)
		}
		cfg.Policy.Persistence = p
		if p == engine.PersistPeriodic && cfg.Policy.SnapshotEvery == 0 {
			cfg.Policy.SnapshotEvery = 100
		}
	case "snapshot_every":
		n, err = num(1 << 30)
		cfg.Policy.SnapshotEvery = int(n)
	case "max_packet_size":
		n, err = num(268_435_460)
		cfg.MaxPacketSize = uint32(n)
	case "receive_maximum":
		n, err = num(65535)
		cfg.ReceiveMaximum = uint16(n)
	case "max_inflight_v311":
		n, err = num(65535)
		cfg.InflightV311 = uint16(n)
	case "max_queued_messages":
		n, err = num(1 << 30)
		cfg.MaxQueued = int(n)
	case "queue_full":
		q := map[string]engine.QueueFull{"drop-oldest": engine.DropOldest, "drop-newest": engine.DropNewest}[v]
		if q == 0 {
			return fmt.Errorf("%q is not drop-oldest or drop-newest", v)
		}
		cfg.QueueFull = q
	case "topic_alias_maximum":
		n, err = num(65535)
		cfg.TopicAliasMaximum = uint16(n)
	case "topic_aliases_out":
		n, err = num(65535)
		cfg.TopicAliasesOut = uint16(n)
	case "max_keepalive":
		n, err = num(65535)
		cfg.MaxKeepAlive = uint16(n)
	case "allow_anonymous":
		*anonymous, err = flag()
	case "shared_subscriptions":
		b, err = flag()
		cfg.SharedSubscriptions = b
	case "subscription_identifiers":
		b, err = flag()
		cfg.SubscriptionIDs = b
	case "password_file", "acl_file":
		return loadAccessFile(cfg, dir, key, v)
	default:
		return fmt.Errorf("unknown key (known: preset, persistence, snapshot_every, max_packet_size, receive_maximum, max_inflight_v311, max_queued_messages, queue_full, topic_alias_maximum, topic_aliases_out, max_keepalive, allow_anonymous, connect_timeout, max_connections, password_file, acl_file, shared_subscriptions, subscription_identifiers)")
	}
	return err
}

// loadAccessFile reads a password or ACL file into cfg.Access.
func loadAccessFile(cfg *engine.BrokerConfig, dir, key, path string) error {
	if !filepath.IsAbs(path) {
		path = filepath.Join(dir, path)
	}
	text, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if cfg.Access == nil {
		cfg.Access = &engine.Access{}
	}
	if key == "password_file" {
		cfg.Access.Users, err = engine.ParsePasswordFile(string(text))
		return err
	}
	cfg.Access.ACL = true
	cfg.Access.Rules, err = engine.ParseACLFile(string(text))
	return err
}
