// Package diff holds the differential fuzz target of the MQTT 5.0 codec: the
// same bytes are decoded by engine/packet and by paho.golang's packets (the
// peer codec, MQTT 5.0 only), each decoded packet is re-encoded by the other
// side's encoder and read back, and every disagreement is a finding.
//
// A disagreement is decided from the standard's text, not by majority:
//
//   - both sides accept and read different packets: one of them is wrong; the
//     target fails unless the difference is a known finding of the peer's
//     (knownPeer below, each listed in docs/findings.md with its section);
//   - engine/packet accepts and the peer refuses: the target fails unless the
//     input is a known case where the peer is wrong (a bug of ours would be
//     fixed, never listed);
//   - engine/packet refuses and the peer accepts: engine/packet names the
//     normative rule the bytes break (its *packet.Error), so the peer is the
//     lenient side; the target checks that the refusal is a codec *Error and
//     goes on. TestPeerLeniency pins one input per rule the peer misses, so a
//     change on either side shows.
//
// The canonical form both sides are compared in (canon.go) covers every field
// the two codecs share; it lives in a non-test file because OSS-Fuzz builds a
// target's _test.go file with the package's non-test files only.
//
//	go test ./fuzz/diff                                        # replays the corpus
//	go test ./fuzz/diff -run '^$' -fuzz . -fuzztime 60s        # fuzzes
package diff
