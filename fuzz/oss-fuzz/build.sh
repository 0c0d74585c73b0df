#!/bin/bash -eu
# Builds mqttlab's native Go fuzz targets as libFuzzer binaries for OSS-Fuzz
# and ClusterFuzzLite (.clusterfuzzlite/build.sh runs this script).
#
# The targets live in more than one package: the codec target has a package
# of its own (fuzz/codec) so that its test binary stays small, the others are
# in fuzz/. Each line below is `build DIR NAME BINARY`: the package directory
# (relative to the module root), the target's name without its "Fuzz"
# prefix, and the binary written to $OUT.
#
# compile_native_go_fuzzer rewrites the _test.go file that defines a target
# (testing.F becomes go-118-fuzz-build's F) and builds it with the package's
# non-test files only, so each target's file must need no other _test.go
# file. It finds that file with `grep -r -l NAME` over the package directory
# (subdirectories included) and needs exactly one match, so no other file
# there (this one included) may spell a target's full name: the list below
# names each target without its "Fuzz" prefix. fuzz/ossfuzz_test.go checks
# all of this.
#
# The canary target is left out on purpose: it fails on a needle by design
# and exists only to prove the local campaign's crasher pipeline.

cd "$SRC/mqttlab"
MODULE=github.com/mqttlab/mqttlab

# The rewritten harness imports go-118-fuzz-build's testing shim.
go get github.com/AdamKorcz/go-118-fuzz-build/testing

# build DIR NAME BINARY: compile target "Fuzz"NAME of package $MODULE/DIR
# into $OUT/BINARY.
build() {
  compile_native_go_fuzzer "$MODULE/$1" "Fuzz$2" "$3"
}

build fuzz/codec Decode fuzz_decode
build fuzz ClientBytes fuzz_client_bytes
build fuzz BrokerBytes fuzz_broker_bytes
build fuzz SimPlan fuzz_sim_plan
build fuzz ParsePlan fuzz_parse_plan
build fuzz/diff DiffPaho fuzz_diff_paho
