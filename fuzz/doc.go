// Package fuzz holds the native Go fuzz targets of the lab that drive the
// engine and the simulator (hostile bytes for a client and a broker, whole
// simulated runs, and the canary that proves the crasher pipeline), their
// committed seed corpora under testdata/fuzz/, and the checks that every
// target under fuzz/ builds with OSS-Fuzz's native Go tooling.
//
// The codec target is not here: it lives in fuzz/codec, a package that
// imports only engine/packet, because Go's fuzzer pays on every execution
// for the coverage counters of every package in the test binary, and this
// package's binary links the engine, the simulator, the model and rapid.
// `go test ./fuzz/...` replays the corpora of both packages, and the
// campaign (fuzz/campaign) runs the targets of both.
package fuzz
