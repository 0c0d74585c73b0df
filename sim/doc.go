// Package sim is the deterministic world the engine runs in: a virtual clock,
// a virtual network, crashable disks and crash points at every step. One
// seeded source decides everything, so a seed is a replayable run.
//
// # Draws
//
// Every decision draws from one Source (math/rand/v2.Source): NewPCGSource
// for ordinary runs, NewByteSource for fuzzing, or any Uint64 generator (the
// properties package plugs a rapid-backed one in through Config.Source). A
// zero draw is always the benign choice — no fault, the shortest delay, the
// first candidate — so an all-zero source gives a fault-free run and
// shrinking draws towards zero shrinks runs towards simple ones. With a seed
// (no Source override) the fault profile, the plan and the run draw from three
// independent PCG streams, so an edited plan replays with the same run draws.
//
// # The world
//
//   - Scheduler: a binary-heap priority queue keyed (virtual time,
//     sequence); the clock jumps to the next item; no wall clock anywhere.
//   - Network: one connection per client dial, two FIFO byte streams each.
//     Per packet: latency with jitter (plus a slow link's extra), bytes split
//     into chunks, a reset (each side told at its own time) or a half-open
//     fault (bytes vanish, one side or neither is told; keep-alive finds it).
//     A partition holds a client's bytes, closes and dials until heal. A
//     crashed node's endpoints vanish silently; data reaching them is answered
//     by a reset.
//   - Disk per node: a Persist without Sync is pending; a crash keeps every
//     synced write and each pending one unless the draw loses it; a torn last
//     write is dropped at restart (the disk models a checksummed log, so the
//     engine never sees a corrupt record from the sim).
//   - Nodes: the broker and the scenario's clients, each an engine built by
//     engine.NewBroker/NewClient from its disk's records. Crash (memory,
//     timers and unsynced writes gone), Restart, Stop (clean: all synced).
//     Clients reconnect after a backoff when their connection ends.
//   - Applications: each client publishes the plan's messages (payload = the
//     message id, e.g. "p1-17"; accepted when Publish completes Accepted) and
//     takes each delivery by appending it to its own synced log, then Acks.
//   - Crash points: before and after every action of a Step and inside the
//     application callback before and after its durable write. Random mode
//     fires each with the profile's CrashPointPPM; exhaustive mode
//     (Config.Crash) crashes one node at its K-th point; Result.CrashPoints
//     gives the count per node to enumerate K.
//
// # Plans, profiles, scenarios
//
// A Plan is the workload and its plan-level faults as data, with a text form
// (Plan.String, ParsePlan) whose header carries seed, profile, preset,
// scenario and protocol version: a plan file replays with nothing else
// (HeaderOf, ConfigOf). A plan file proves it is whole: its last line, "end
// ops=N crc32=XXXXXXXX", states the op count and the CRC-32 of the lines
// before it (each trimmed of surrounding white space), and ParsePlan refuses
// a plan of PlanFormat without it, with a wrong count or checksum, or with
// text after it (ErrPlanNotWhole): a cut or damaged file never replays as
// another run. Plans of LegacyPlanFormat (1, before end lines) still parse
// without one; Plan.String keeps a plan's format. A run with a custom profile (Config.Custom) adds a
// "faults" line holding every Profile field but Doc ("faults name=calm
// latency=1ms..5ms chunk=200000 reset=0 halfopen=0 partition=0 slow=0
// crash=0 stateloss=0 crashpoint=0 lose=0 torn=0 restart=100ms..2s
// backoff=100ms..1s slowextra=200ms": ppm integers, durations as in advance
// ops, ranges min..max); a preset whose policies are not those of the engine
// preset of its name (a mutant, a custom mix) adds a "policy" line holding
// every ClientPolicy and BrokerPolicy field under engine's text names
// ("policy client.retransmit=memory ... client.mutations=none
// broker.persistence=periodic broker.snapshot-every=16 ...
// broker.mutations=ack-before-persist"). Both lines need every key; an
// unknown key, a repeated or missing key or a bad value is an error naming
// the line and the key. Profiles (calm, lossy, crashy, swarm) give fault probabilities
// in parts per million; swarm draws them from the seed. Scenarios (standard,
// small, swarm) generate plans from a seed and a profile (Generate).
//
// The swarm scenario draws its workload from the seed too (scenario_swarm.go):
// 1-8 publishers and subscribers (and in one seed of 8, hundreds of idle
// clients), each client's protocol level, session (persistent, clean, a v5
// Session Expiry), windows, keep-alive, Maximum Packet Size and will;
// wildcard and overlapping subscriptions, QoS downgrade, unsubscribe and
// resubscribe, v5 subscription options, retained messages and their
// clearing, message expiry, padded payloads, normal and abnormal
// disconnects and outages, and in one seed of 4 packet-id counters that
// start a few ids below 65535 and wrap (swarm_wrap.go: "startid" on the
// nodes; wrap=long, pinned only, wraps with 65,600 messages instead). A
// Workload (Config.Workload, the header's "workload" line, "key=value"
// pins) pins any dimension; DefaultWorkload pins none. Its plans declare their clients with "node"
// ops (NodeConfig: "node s1 v=4 clean window=2 will=w/s1:1:false:0"), which
// also configure the broker's windows ("node broker rm=2"); each will
// message is named "<client>-w<n>" per Connect (the Sent CONNECT's Msg).
// A padded payload is the message id, a space and padding: the history
// records the id, and with every PUBLISH its encoded size on the wire
// (model.Packet.Size), which the model weighs against a subscriber's
// Maximum Packet Size.
//
// # A run
//
// New builds a world; Apply runs plan ops (advance runs the clock); RunFor and
// RunUntilQuiet drive it; Run is the loop over a whole plan. A run has two
// phases: safety (faults on, the plan runs) and liveness (StartLiveness heals
// every partition, restarts every node, reconnects every client, turns faults
// off). The world must then go quiet within Config.LivenessBound: no packet id
// in flight on either side of any session (followed from the packets), no
// byte in flight, every client connected, the broker with nothing inflight or
// queued (Broker.Stats), and every accepted QoS>=1 message delivered to every
// subscriber whose subscription matched when it was accepted (one counts
// from the SUBACK its client reads, unless the broker took a later
// UNSUBSCRIBE or QoS 0 SUBSCRIBE of the filter before that; none is owed of
// a message its publisher's clean start discarded). Ids of a
// session the broker discarded are not in flight: once it sent Session
// Present 0 (read or not), or once it may have discarded an expired v5
// session without a CONNACK to show it (expiry.go, [MQTT-4.1.0-2]).
// Otherwise the history ends with model.Stuck listing what is pending.
//
// Output: a model.History (the model package's vocabulary), a trace (one line
// per event and action, with virtual time, headed by seed, profile and
// preset) and the FNV-64a checksum of the trace text. For readers of the
// history (the sequence chart) it also records the network's cuts
// (model.Cut, a reset or a half-open connection, when it happens) and the
// writes a crash lost (the Crash event's Reason).
//
// A Sent event (and its Received twin) records what the Send's bytes say:
// the world decodes every Send.Data with engine/packet (PUBLISH and the
// acknowledgements into a reused Decoder's values, without allocating) and
// keeps the engine's Send.Packet only as a cross-check. Bytes that do not
// decode as exactly one packet, or decode to another packet than the one
// claimed, fail the run with Result.Err wrapping ErrWireMismatch (wire.go):
// a bug that builds the right packet and writes other bytes cannot hide.
// A command that fails because the client engine's own codec refused the
// packet it built (a *packet.Error, such as packet id 0 after a wrap), or
// refused it as larger than the broker's Maximum Packet Size (an
// *engine.PacketTooLargeError, [MQTT-3.2.2-15]), is recorded as
// model.Refused, which the model judges.
//
// Both are recorded compactly during the run and built only when asked for,
// which is why Result.History, Result.Trace and Result.Checksum are methods
// (DESIGN.md has Result carry them as fields). The history is kept as
// pointer-free records (histlog.go) and built into model.Events on the first
// History call: a seed records thousands of events, and as model.Events (ten
// strings each) they were the largest object of a run and a large share of
// the collector's work. The trace is kept as a tape of the calls that write
// it (tape.go), about a third of the text's size, and replayed through the
// text formatter when Trace or Checksum is called: formatting and hashing
// each line as it was written took a fifth of a seed's CPU, most of it in
// FNV-64a's serial multiply per byte. A campaign, which records every seed's
// checksum, still pays for the hashing; a run whose caller reads only the
// verdict does not. The checksum stays the FNV-64a of the trace text, byte
// for byte as the issue asks: a user can check it against any saved trace
// with a stock FNV-64a.
//
// A Runner runs plans back to back on one world's memory: the history's
// records, the trace tape, the string table and the scheduler's heap are
// lent from each run to the next, so a campaign worker or a benchmark does
// not allocate them per seed (the collector was otherwise busy most of the
// time). A Runner's Result expires at its next Run, and says so by panicking
// if read after; sim.Run's never expire. With Runner.ReuseHistories the
// model.Events a History builds are lent on too (a campaign judges each seed
// before the next), so a judged seed allocates about 0.7 MB instead of 1.4.
//
// # Shrinking
//
// Shrink reduces a failing plan while its run still violates the same
// invariant (the step may move), judged by a caller's Judge (simrun's spec
// or preset judge) or model.CheckPromised. Every candidate is a real run on
// one Runner; ValidatePlan refuses a candidate that could not run. In rounds
// until a round changes nothing: random faults are pinned as plan ops
// (a crash at a crash point as a crash op armed just before it for that
// kind of point, skipping the points of that kind its node passed at that
// time before it, "crash s1 point=callback-pre skip=2" (Result's record of
// them), or as crash and restart ops between steps, crash points off; a
// connection reset or half-open as a reset or half-open op armed for the
// packet whose sending drew it, "reset p1 on=pubcomp", "half-open p1
// told=client on=publish skip=1", or at its time, "reset p1", that random
// fault off; or, once, with the random faults left on: an armed crash or cut
// makes the draws its random one made, so that plan replays the run
// exactly), ops are deleted (halving chunks down to single ops, a node's or
// a kind's ops, a fault with its repair, small windows), adjacent advances
// merged, arguments simplified towards the benign zero (QoS, retain, clean
// start, durations, message ids, skips) and the fault profile too (a custom
// profile, probabilities to zero, ranges to their minimum). After the first
// fixed point, a deletion that no longer fails is also tried with 16 seeds
// derived from the plan's: a deleted op shifts every later draw, and a
// reroll often finds the same failure in the smaller plan. In that stage a
// plan of at most 64 ops also has each deletion (a declared client's ops,
// then single ops) tried with one of its armed faults re-aimed at another
// skip (up to 31; a crash also at the other side of an action): a deletion
// that removes crash points or packets moves the one an armed fault fires
// at, and re-aiming finds it again. An armed fault
// waits for its point or packet, so it still lands where the failure needs
// it when a deletion moves the run's timing by a few milliseconds, where a
// fault at a fixed time would miss. Deterministic: the same input and options give the same
// plan; Stop (a deadline, Ctrl-C) and MaxRuns end it with the smallest
// failing plan so far.
//
// The package has no goroutines, channels, timers, package-level randomness or
// map-order dependence: the same config and plan give the same checksum on any
// machine and any GOMAXPROCS.
package sim
