// Package model is the abstract MQTT specification the lab checks runs
// against. It imports no package of this project (only the standard
// library): the spec shares no code with what it checks.
//
// # Contract
//
// A History (history.go) is what a run produced: packets Sent and Received
// per node and peer, application events (Accepted, Acknowledged, Delivered,
// Subscribed, ..., and Refused: a command whose packet the client's own
// codec would not write), faults (Crash, Restart, StateLost, Partition) and the
// liveness markers (LivenessStart, Quiescent, Stuck, Cutoff, Failed; a
// Cutoff ends a history still in progress: what was in flight then is
// unfinished, not a violation, see Cutoff). The simulator
// and the live TCP recorder both produce it. Check runs the invariant
// checks and returns Violations sorted by step (the index in History.Events;
// a violation that follows from an earlier one, a NoLoss after a broker's
// wrong Session Present, comes right after that cause, ExplainedBy naming
// it: explain.go),
// each with the node at fault, a readable reason citing the spec ids, and
// Events: the indexes of the events it rests on (the breach, and the first
// send of a reused id, the Accepted of a lost message, the PUBREL a resend
// follows...), so that a report or a chart can point at them. A new check
// builds its violations with NewViolation(inv, step, node, reason, cited...).
// Checks are pure, deterministic, and linear in the history length apart from
// NoLoss (messages × subscriptions).
//
// Cost: Check (and CheckPromised, which shares it with FaultsOf) indexes the
// history once (index.go): node and message names become small dense ids,
// and the checks keep their state in slices, bit sets and int-keyed tables
// rather than maps keyed by strings. The index also keeps each event's kind
// and packet type in a byte code, so a pass skips the events it does not
// read without loading them (eventSet). Tables indexed by (node, message)
// or (node, node) fall back to maps when a history has too many nodes or
// messages for a dense table of a few times its length, and packet-id
// tables keep ids of 1024 and above in maps (idtab.go); tests prove both
// forms agree. Reasons are formatted only for violations. A judge that asks
// FaultsOf and then Check of one history should call CheckUnder, which
// indexes it once (or IndexOf, to ask many questions of one history).
// Check, CheckPromised, CheckUnder and FaultsOf borrow their buffers and
// spare tables from a pool (scratch.go) and give them back: consecutive
// calls reuse the memory, cleared, and no verdict depends on it.
//
// Assumptions about histories: the broker is named BrokerNode and clients
// use their client ids as node and peer names; message ids (Msg) are unique
// per history; a Delivered event is emitted once the application owns the
// message; Subscribed is emitted when the SUBACK arrives; HadState is true
// when the client holds a session (possibly empty) as it connects. NoLoss
// dates a subscription change to the broker's SUBACK/UNSUBACK of its packet
// id; only when a recorder fills Packet.Filter (and QoS) of SUBSCRIBE and
// UNSUBSCRIBE does it also see changes whose SUBACK/UNSUBACK the client
// never received (a lost SUBACK of a re-SUBSCRIBE at QoS 0). Connection
// boundaries are read from ConnOpened/ConnClosed when present, and otherwise
// from CONNECT/CONNACK packets and crashes. A client's Sent CONNECT carries
// in ReceiveMax the Receive Maximum it announced (0 when absent); SendQuota
// judges the broker's sends against it from the client's own events (what
// it received and acked), which on a FIFO connection never overstate the
// broker's count. A CONNECT's Packet.TopicAlias is the Topic Alias Maximum it
// announced, a PUBLISH's its Topic Alias (MQTT 5.0 §3.3.2.3.4); a PUBLISH
// that names its topic by the alias alone is recorded with an empty Topic,
// and the index resolves it per side and connection before any check reads
// topics (topicalias.go), while TopicAlias judges the wire as recorded.
// Checks that judge the end of a
// run (NoLoss, PubrelAnswered, NoStuck) do so only when LivenessStart is
// present; end-of-history violations point at the step that started the
// obligation (the Accepted, the PUBREL) or at the last event.
//
// # Invariants
//
//	NoLoss          accepted QoS>=1 messages reach every matching QoS>=1 subscriber the broker held when it got them, while the subscriber's session lives, whatever its expiry (what a session the history shows gone as the spec allows held is excused, not one the broker lost while it should live: sessionEnds) [MQTT-3.1.2-23] [MQTT-4.1.0-2] [MQTT-3.1.2-4] (at each receipt that may have been the publication, when the broker crashed before acknowledging the first), but a copy whose Message Expiry ran out unsent (a retained copy a later SUBACK brought is not its send) while the subscriber was away, its window full or the broker down (lossexpiry.go), and a copy whose encoded size exceeds the subscriber's Maximum Packet Size (packetsize.go), and a message the broker refused (PUBACK/PUBREC >= 0x80, never a success: refused.go; owed by no rule), and a copy the broker dropped as the limits it declares allow (Options.Limits, droplimits.go) (judged when a liveness phase ran, stuck or not) [MQTT-3.8.4-3] [MQTT-3.10.4-3] [MQTT-3.3.2-5] [MQTT-3.1.2-25] [MQTT-4.1.0-1]
//	QoS2ExactlyOnce QoS2 and QoS0 delivered at most once per subscriber, a retained copy (RETAIN=1) that a later matching SUBSCRIBE brought apart; nothing delivered that was never accepted [MQTT-4.3.3-10] [MQTT-3.3.1-9]
//	Retransmit      resend only after SP=1 on a new connection, DUP=1, same id/payload, original order; no PUBLISH after PUBREL [MQTT-4.4.0-1] [MQTT-3.3.1-1] [MQTT-4.6.0-1] [MQTT-4.3.3-6]
//	PubrelAnswered  every PUBREL answered by PUBCOMP on the same connection [MQTT-4.3.3-11]
//	PacketIDUnique  no new packet reuses an id in flight in its direction, nor has id 0 (sent, or Refused by the engine's own codec) [MQTT-2.2.1-3] [MQTT-2.2.1-4]
//	SendQuota       v5 unacked QoS>0 PUBLISHes per connection <= the receiver's Receive Maximum: client's <= CONNACK's [MQTT-3.3.4-7], broker's <= CONNECT's [MQTT-3.3.4-9] [MQTT-4.9.0-2], and (any version) <= its declared in-flight window (Options.Limits)
//	Order           first deliveries per publisher, topic and QoS follow accepted order (a message with no id, an empty payload, is not ordered; an expiring message the broker received twice may come late [MQTT-3.3.2-5], and so may a QoS 1 resend the broker received after the later message, followed by that one's resend [MQTT-4.3.2-5]; a retained copy a SUBSCRIBE brought takes no place [MQTT-3.3.1-9]) [MQTT-4.6.0-5] [MQTT-4.6.0-6]
//	NoStuck         no Stuck; no Failed after LivenessStart; Quiescent after LivenessStart
//	SessionPresent  CS=1 gets SP=0; SP=1 without state closes; SP=0 discards old state, whole: no copy of a message the broker last received before an SP=0 reaches that client later, across any crash (retained copies and shared hand-ons apart); a broker that kept the session says SP=1 (sessionkept.go) [MQTT-3.2.2-2] [MQTT-3.2.2-3] [MQTT-3.2.2-4] [MQTT-3.2.2-5] [MQTT-3.1.2-4]
//	GrantedQoS      each copy at min(publish QoS, max QoS granted to the client's matching filters), retained copies too [MQTT-3.8.4-8] [MQTT-3.3.4-2]
//	Unsubscribe     nothing received after the UNSUBACK of a client's last matching filter reaches it; a resubscribe brings delivery back (NoLoss) [MQTT-3.10.4-2]
//	Overlap         one copy per publication and client, however many filters match [MQTT-3.3.4-2]
//	Retained        a SUBACK brings each matching topic's last retained message (RETAIN=1) per Retain Handling, across broker restarts; never a cleared or replaced one; live copies RETAIN=0 unless Retain As Published [MQTT-3.3.1-6] [MQTT-3.3.1-9] [MQTT-3.3.1-10] [MQTT-3.3.1-11] [MQTT-3.3.1-12]
//	MessageExpiry   no first send after the Message Expiry Interval ran out; the interval forwarded is what remains [MQTT-3.3.2-5] [MQTT-3.3.2-6]
//	FlowResume      no QoS>0 copy owed a client connected at the end is parked for good: a window that opens lets it go (judged when a liveness phase ran) [MQTT-4.9.0-2] [MQTT-3.3.4-9]
//	SessionExpiry   a v5 broker answers Session Present=0 once the Session Expiry Interval passed after the session's last connection closed, its clock running on across broker crashes (slack only where the crash took the connection down or came at the close's instant: then from the broker's first event after the restart) (sessionexpiry.go) [MQTT-4.1.0-2]
//	ClientKeepAlive a connected client never stays silent longer than its Keep Alive (or the CONNACK's Server Keep Alive), unless awaiting a PINGRESP [MQTT-3.1.2-23] [MQTT-3.2.2-21]
//	SharedDelivery  each accepted QoS>=1 message on a shared subscription's filter ($share/{ShareName}/{filter}) reaches at least one member of the group (none owed by a group a node joined at QoS 0, nor a QoS 2 one when a member's session ended after it came), and a QoS 2 one (members at QoS 2) only one (MQTT 5.0 §4.8.2, [MQTT-4.8.2-5]; shared.go)
//	BrokerKeepAlive the broker closes a connection for keep-alive only after 1.5 × Keep Alive (or Server Keep Alive) without a whole packet from the client (brokerkeepalive.go) [MQTT-3.1.2-22] [MQTT-3.1.2-24]
//	TopicAlias      each Topic Alias a client receives is within the Topic Alias Maximum of its CONNECT (none when it announced none), and one sent alone was set earlier on the same connection (topicalias.go) [MQTT-3.3.2-11] [MQTT-3.1.2-27] [MQTT-3.3.2-7]
//	SubscriptionIDs a first PUBLISH to a v5 client carries the Subscription Identifiers (Packet.SubIDs; a SUBSCRIBE's is its one) of the subscriptions it is sent for: every matching ordinary subscription's in the session's copy, the shared subscription's in a group's copy (subids.go) [MQTT-3.3.4-3] [MQTT-3.3.4-4] [MQTT-3.3.4-5]
//	MaxPacketSize   no PUBLISH the broker sends a client is larger (Packet.Size, the encoded size the wire carried) than the Maximum Packet Size of that connection's CONNECT [MQTT-3.1.2-25]; none a client sends the broker is larger than that of the broker's CONNACK, and a client's refusal of one as too large is due (packetsize.go) [MQTT-3.2.2-15]
//	DollarTopics    no copy of a message on a topic starting with '$' reaches a client through a filter whose first level is # or + (routing.go) [MQTT-4.7.2-1]
//	Access          under the broker's declared ACL (ACL events): no subscription granted that the client's read rights do not cover, no copy sent to a client on a topic it may not read, no copy of a publication its publisher may not write, and a v5 one refused (PUBACK/PUBREC >= 0x80); such a publication (3.1.1: acknowledged and dropped) is owed to no one, and changes no retained message (access.go; MQTT 5.0 §5.4.2, [MQTT-3.3.5-2])
//
// A shared subscription's filter counts in routing as its topic filter:
// each group a client belongs to may send it one more copy, at most at the
// QoS it was granted, and none is owed to a given member.
//
// SubscriptionIDs rides the routing pass too: a subscription counts with the
// identifier of its acknowledged SUBSCRIBE; an identifier it may have had
// since the message was routed (a pending SUBSCRIBE or UNSUBSCRIBE, one
// replaced or unsubscribed after the routing) may be sent and need not be.
//
// GrantedQoS to FlowResume and SubscriptionIDs are judged in one pass over the broker's own packets
// (routing.go): the subscriptions it acknowledged (SUBSCRIBE and UNSUBSCRIBE
// of one filter, with their options: Packet.Opts, and the SUBACK's granted
// QoS in Packet.Reason), the retained message of each topic, and the copies
// each PUBLISH it received owes each client. Doubt goes to the broker: an
// unacknowledged SUBSCRIBE or UNSUBSCRIBE may or may not have taken
// effect, a client that sends requests of several filters is not judged, a
// retained message a broker crash may have lost is not owed, and an owed
// retained copy must be sent only while the connection and the broker stay
// up (judged when a liveness phase ran). A v5 session the broker may have discarded
// unseen (it took a Clean Start=0 CONNECT after the Session Expiry Interval
// had passed since its end of the client's last connection, and crashed or
// closed before any CONNACK: SessionWatch, expirydoubt.go, which the
// simulator's liveness observer uses too) owes nothing it held, its
// subscriptions may or may not exist, and PacketIDUnique lets the broker
// use its ids again [MQTT-4.1.0-2]. PUBLISHes the broker cannot tie to
// a publication (will messages) are not judged.
//
// Where the spec is ambiguous the pass judges only what every reading
// forbids. A retained copy a SUBACK brings is "sent in response to a
// Subscription", at min(message QoS, that subscription's granted QoS)
// [MQTT-3.8.4-8]; but a message matching several of a client's filters
// goes "respecting the maximum QoS of all the matching subscriptions"
// [MQTT-3.3.4-2], and the spec does not say which clause governs a
// retained copy whose topic an older filter of a higher QoS also matches:
// such a copy may go at either QoS (routeClient.overlapQoS). A RETAIN=1
// send that may be that retained copy or a live copy (Retain As Published)
// is read as the copy under which it breaks no rule, when one exists
// (routeCopy.asRetained); one of a topic whose retained message a broker
// crash left in doubt is never taken for a live copy at a QoS that copy
// may not have (routeState.retainedInDoubt).
//
// # Promises
//
// Promises(policy, FaultsOf(history)) is the set of invariants the
// configuration guarantees under the faults that happened; CheckPromised
// reports only their violations. The fixed engine (FixedPolicy) must show no
// promised violation under any faults; each legacy knob must show violations
// of the invariants it gives up. Every invariant is promised except:
//
//	policy                        | faults (see Faults)                                   | not promised
//	------------------------------|-------------------------------------------------------|---------------------------------------------
//	Retransmit=None               | a publisher crashed or lost its connection with unacked messages | NoLoss, NoStuck, SharedDelivery
//	Retransmit=None               | a publisher lost its connection with unacked messages | PacketIDUnique (it forgets its in-flight ids)
//	Retransmit=None or Memory     | a publisher crashed with unacked messages             | NoLoss, NoStuck, SharedDelivery
//	Retransmit=None or Memory     | any publisher crash                                   | PacketIDUnique, Order
//	AckBeforeCallback             | a subscriber crashed holding a received, undelivered PUBLISH, or in the callback before its write | NoLoss, NoStuck, SharedDelivery
//	QoS2Durable=false             | any subscriber crash                                  | QoS2ExactlyOnce, SharedDelivery
//	any                           | a subscriber (see Roles) lost its QoS2 state (StateLost) | QoS2ExactlyOnce, SharedDelivery
//	any (also QoS2Durable)        | a crash in CrashInCallbackPost, or between a QoS2 delivery and its PUBREC | QoS2ExactlyOnce, SharedDelivery
//	any                           | a publisher holding unacked messages crashed after reading Session Present 0 to Clean Start 0, before acting on it | QoS2ExactlyOnce, SharedDelivery
//	Broker=None or Periodic, or BrokerAckBeforeStore | a broker crash                     | NoLoss, NoStuck, QoS2ExactlyOnce, Retransmit, PacketIDUnique, Order, SessionExpiry, GrantedQoS, Unsubscribe, Overlap, Retained, MessageExpiry, SharedDelivery, FlowResume, SubscriptionIDs, SessionPresent
//	Broker=None                   | a clean stop of the broker (Crash at CrashStop)       | NoLoss, NoStuck, QoS2ExactlyOnce, Retransmit, PacketIDUnique, Order, SessionExpiry, GrantedQoS, Unsubscribe, Overlap, Retained, MessageExpiry, SharedDelivery, FlowResume, SubscriptionIDs, SessionPresent
//	UnknownAck=Fail (either side) | any fault at all (crash, state loss, partition, lost connection) | NoStuck, PubrelAnswered, NoLoss, ClientKeepAlive, SharedDelivery, FlowResume (a failed client sends and acks nothing)
//	any                           | any                                                   | SendQuota, BrokerKeepAlive and TopicAlias always promised
//
// A clean stop (Crash at CrashStop) loses a node's memory but none of its
// writes: a client's stop counts as a crash in every row above; the broker's
// counts only where it keeps nothing durable, since a stopping broker writes
// all it persists at all (engine.Shutdown).
//
// Wherever NoLoss is given up, so is NoStuck: a lost message is work the
// liveness phase never finishes (the simulator's Stuck lists undelivered
// messages, and a legacy client keeps the ids it will never resend).
//
// Why: without a store the client cannot resend (coreMQTT before the seed's
// hooks) and frees the ids; a memory store survives reconnects but not
// reboots; acking before the callback loses the message when the subscriber
// dies between the ack and the app's write (mosquitto #2884); volatile QoS2
// state forgets delivered ids, so the broker's resent PUBLISH is delivered
// again; even durable state leaves the window between the app's durable
// write and the engine's persisted PUBREC; a broker that loses or rolls back
// state loses queued messages, re-forwards QoS2 messages, may resend or
// reuse ids it forgot, and routes by the subscriptions and retained
// messages it rolled back to; an unknown PUBREL or PUBREC — which any lost
// connection can produce when a PUBCOMP is lost and the PUBREL resent — fails
// a legacy receiver for good (coreMQTT #271), so it answers nothing, gets
// stuck and delivers nothing more.
//
// # Broker limits
//
// A broker may declare limits it drops messages at (BrokerLimits, in
// Policy.Limits and Options.Limits): a per-session queue bound with its
// policy (drop-oldest or drop-newest), its in-flight window per client,
// a longest wait before a copy may expire. The spec asks a server to keep
// a session's messages for the session [MQTT-4.1.0-1] and grants, in the
// same section (MQTT 5.0 §4.1, non-normative), that storage has limits and
// that state may be discarded as an automated response to defined
// conditions. The broker's drops are recorded as Dropped events (the live
// tester reads them from the broker's log). NoLoss and FlowResume excuse a
// lost copy only for a recorded drop the declared limits allow: a
// queue-full drop when a bound is declared, the copy was still queued, the
// history leaves room for a full queue at the drop (an upper bound of the
// queue from the broker's received and sent packets), and the order of the
// drops and later sends fits the declared policy (droplimits.go); an
// expired drop when the copy waited the declared expiry. Without declared
// limits every drop of an owed copy is a loss, and NoLoss names it. A
// declared in-flight window is also a promise of its own: SendQuota holds
// the broker to it on every connection. The limits change no Promises
// row: they say which losses are not losses.
//
// Mutations of the fixes (engine.Mutation) are deliberately not part of
// Policy: a mutated fixed engine keeps its promises on paper, so the checks
// catch the mutation as a promised violation.
package model
