// Package engine is the sans-IO MQTT engine: a client and a broker written as
// pure state machines.
//
// Contract. Client.Step and Broker.Step take the current virtual time and one
// Event and return the Actions the caller must carry out, in the order they
// must take effect (persist before send; deliver before ack when the policy
// says so). The engine never reads a clock, starts a goroutine, draws a random
// number, or iterates a map in unsorted order, so the same events give the same
// actions everywhere. The world that drives it (package sim, or package live
// over TCP) owns time, bytes, disks and crashes, and may crash the node between
// any two actions.
//
// Durable state leaves the engine only as Persist actions and comes back only
// through NewClient/NewBroker(cfg, restored): that is the reboot path.
//
// Sessions are whole or gone across any crash. A crash keeps any part of
// the unsynced writes, so the broker discards a durable session (a Clean
// Start, its expiry, a resume with Session Expiry 0) under a tombstone, an
// atomic record: b/t/ID, naming the sequence number the discard began at,
// is written and synced first (after anything pending, such as a shared
// member's copies handed on), then the session's records are deleted and
// synced, and only then the tombstone goes. A restart that finds a
// tombstone voids every record of that client id older than it and
// finishes the deletion before anything else; the session a Clean Start
// made after it, newer, stays (broker_session.go dropRecords,
// broker_persist.go restoreTombs). The restored session is the whole old
// one or none of it [MQTT-3.1.2-4] [MQTT-4.1.0-2]. The broker also keeps,
// in each session record, when the session went offline, so its expiry
// clock runs on across restarts; one online at the crash counts from the
// first Step after the restart.
//
// Access. A broker with BrokerConfig.Access authenticates CONNECTs against a
// mosquitto password file (PBKDF2-SHA512 or salted SHA-512 hashes) and
// authorizes SUBSCRIBE, PUBLISH and each delivered message against a mosquitto
// ACL file (user, topic and pattern lines; deny wins). Refusals carry the
// version's code: CONNACK 0x86/0x87 (v5) or return code 4/5 (3.1.1); SUBACK
// 0x87 (v5) or 0x80 (3.1.1); PUBACK/PUBREC 0x87 (v5), while a 3.1.1 publisher,
// which cannot be told, is acknowledged and its message dropped.
// BrokerConfig.MaxKeepAlive caps the Keep Alive (announced to v5 clients as
// Server Keep Alive).
//
// Shared subscriptions and Subscription Identifiers (MQTT 5.0 §4.8.2,
// §3.8.2.1.2) are broker options (BrokerConfig.SharedSubscriptions,
// SubscriptionIDs), off by default so the default CONNACK is unchanged:
// broker_shared.go states how a group's member is chosen and what happens to
// a member's messages when its session ends. (simrun broker turns both on
// by default.) 3.1.1 has no shared subscriptions: a 3.1.1 client's
// "$share/" filter is refused with SUBACK 0x80, whatever the options,
// rather than granted as the ordinary filter it is there (which matches no
// topic its client means: a grant, then silence).
//
// Topic aliases from the broker to the client (§3.3.2.3.4) are a broker
// option too (BrokerConfig.TopicAliasesOut, off by default): within the
// Topic Alias Maximum each v5 client announced, per connection, the least
// recently used alias reassigned when the table is full
// (broker_alias_out.go). The client accepts the broker's aliases up to its
// ClientConfig.TopicAliasMaximum (default 0: none; client_alias_in.go).
//
// Policies select between the legacy behaviours of the three seed pull
// requests and their fixes; every legacy knob's name starts with Legacy.
package engine
