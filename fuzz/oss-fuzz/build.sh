#!/bin/bash -eu
# Builds mqttlab's native Go fuzz targets as libFuzzer binaries for OSS-Fuzz
# and ClusterFuzzLite (.clusterfuzzlite/build.sh runs this script).
#
# compile_native_go_fuzzer rewrites the _test.go file that defines a target
# (testing.F becomes go-118-fuzz-build's F) and builds it with the package's
# non-test files only, so each target's file must need no other _test.go
# file. It finds that file with `grep -r -l NAME` over the package directory
# and needs exactly one match, so no other file under fuzz/ (this one
# included) may spell a target's full name: the list below names each target
# without its "Fuzz" prefix. fuzz/ossfuzz_test.go checks all of this.
#
# The canary target is left out on purpose: it fails on a needle by design
# and exists only to prove the local campaign's crasher pipeline.

cd "$SRC/mqttlab"
PKG=github.com/mqttlab/mqttlab/fuzz

# The rewritten harness imports go-118-fuzz-build's testing shim.
go get github.com/AdamKorcz/go-118-fuzz-build/testing

# build NAME BINARY: compile target "Fuzz"NAME of $PKG into $OUT/BINARY.
build() {
  compile_native_go_fuzzer "$PKG" "Fuzz$1" "$2"
}

build Decode fuzz_decode
build ClientBytes fuzz_client_bytes
build BrokerBytes fuzz_broker_bytes
build SimPlan fuzz_sim_plan
