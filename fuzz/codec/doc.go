// Package codec holds the native Go fuzz target of the MQTT codec
// (engine/packet) and its committed seed corpus under testdata/fuzz/.
//
// The target lives in a package of its own, apart from the other targets of
// ../fuzz, for speed: Go's fuzzer clears and scans the coverage counters of
// every instrumented package of the test binary on each execution, so a
// binary that links only testing and engine/packet runs the codec target
// several times faster than the fuzz package's binary, which also links the
// engine, the simulator, the model and rapid. Keep this package's imports to
// testing, errors and engine/packet.
//
//	go test ./fuzz/codec                                       # replays the corpus
//	go test ./fuzz/codec -run '^$' -fuzz . -fuzztime 20s       # fuzzes the codec
//
// The fuzz campaign (go run ./fuzz/campaign) finds and runs this target with
// the others.
package codec
