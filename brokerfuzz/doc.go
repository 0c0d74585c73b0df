// Package brokerfuzz fuzzes an MQTT broker over the wire, with the strict
// codec (engine/packet) as the oracle of what every packet it sends is.
//
// # Contract
//
// A Case is a list of writes (steps) over one to three client connections:
// valid sessions (CONNECT, PUBLISH, SUBSCRIBE, UNSUBSCRIBE, PINGREQ, PUBREL,
// DISCONNECT, in 3.1.1 and 5.0) with, most of the time, one packet mutated:
// a field set to a value a rule forbids (a wildcard in a topic, QoS 3,
// packet id 0, ill-formed UTF-8, reserved flags, duplicate or foreign
// properties, a second CONNECT, a packet before CONNECT, ...) or its bytes
// flipped, cut or grown. The generator writes bytes with an encoder of its
// own that validates nothing, so the codec is never the generator.
//
// Before a case runs, the codec reads each connection's byte stream as a
// Server reads a Client's: it names the first packet it refuses and the
// rule, and the valid requests before it that a Server must answer. The
// runner then writes the steps to the broker, reads every answer, watches
// "#" from a subscriber of its own, and probes the broker afterwards. The
// oracles (oracle.go) compare the two: crash, hang, left-open, answered,
// forwarded, success-reason, unanswered, and growth of memory or
// descriptors. Only refusals that cite a normative statement
// ([MQTT-x.y.z-n]) are judged; those the codec cites by section (a form
// the standard states without a MUST) are not, so a lenient reader is not
// reported for leniency the standard allows. Every wait is bounded
// (Timing) and generous: a slow broker must not read as a broken one.
//
// Violations group into findings by oracle, rule and packet type (the
// codec's rules behind them are counted within); the first case of each
// finding is shrunk by removing steps while the broker, run again, still
// trips the same oracle and rule, and saved in a replay format
// (Case.WriteTo, ParseCase) that runs against any broker.
//
// # Why a seed-driven generator, not Go's fuzzing engine
//
// Go's native fuzzing engine steers by the coverage of the process it runs
// in. The broker under test is another process, often in another language:
// the engine would see only the fuzzer's own code, and its feedback would
// steer nothing. So cases come from a seeded generator (a case is a function
// of its seed, reproducible without a corpus), and the feedback is the
// broker's behaviour instead of its coverage: a case whose answers (the
// packet types and reason codes per connection, which connections closed,
// the codec's verdict) form a signature not seen before joins the corpus,
// and half of the later cases are corpus cases changed (a step damaged,
// dropped, doubled, moved, or spliced from a fresh case).
//
// The package starts no process and needs no broker of its own: the caller
// (simrun fuzz-broker) starts the broker and hands over its address, a way
// to see its process end, to restart it and to sample its resources.
package brokerfuzz
