#!/bin/bash
# Builds one native Go fuzz target as a libFuzzer binary, as OSS-Fuzz does
# (build.sh's compile_native_go_fuzzer runs go-118-fuzz-build, then links
# with $LIB_FUZZING_ENGINE, which is -fsanitize=fuzzer), runs it for a while
# on an empty corpus and prints libFuzzer's execution rate: the throughput
# the fleet gets per core. Not run in CI.
#
#   fuzz/oss-fuzz/libfuzzer-local.sh [DIR NAME [SECONDS]]
#   fuzz/oss-fuzz/libfuzzer-local.sh fuzz/codec Decode 20     # the default
#   fuzz/oss-fuzz/libfuzzer-local.sh fuzz SimPlan 20
#
# DIR is the target's package directory from the module root and NAME the
# target's name without its "Fuzz" prefix, as in build.sh. With NAME
# "-empty" it builds and runs an empty target in a throwaway module instead:
# libFuzzer's own ceiling on this machine.
#
# Needs clang with libFuzzer (Debian: apt-get install -y clang-14
# libclang-rt-14-dev) and fetches go-118-fuzz-build with the go command. It
# works in a temporary copy of the committed tree (git archive HEAD), so this
# checkout and its go.mod are never touched.
set -euo pipefail

DIR=${1:-fuzz/codec}
NAME=${2:-Decode}
SECONDS_TO_RUN=${3:-20}
# The version this script was last run with; go-118-fuzz-build has no tags.
BUILDER_VERSION=v0.0.0-20250520111509-a70c2aa677fa

CLANG=$(command -v clang-14 || command -v clang || true)
if [ -z "$CLANG" ]; then
  echo "libfuzzer-local: no clang; on Debian: apt-get install -y clang-14 libclang-rt-14-dev" >&2
  exit 1
fi

ROOT=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
export GOFLAGS=-mod=mod GOBIN="$WORK/bin"

echo "== go-118-fuzz-build $BUILDER_VERSION"
mkdir -p "$WORK/tool"
(cd "$WORK/tool" && go mod init tool >/dev/null 2>&1 &&
  go install "github.com/AdamKorcz/go-118-fuzz-build@$BUILDER_VERSION")

if [ "$NAME" = "-empty" ]; then
  # The throwaway module of go run ./fuzz/campaign -ceiling, built for libFuzzer.
  SRC="$WORK/src"
  mkdir -p "$SRC"
  printf 'module fuzzceiling\n\ngo 1.22\n' >"$SRC/go.mod"
  printf 'package fuzzceiling\n' >"$SRC/doc.go"
  printf 'package fuzzceiling\n\nimport "testing"\n\nfunc FuzzNothing(f *testing.F) {\n\tf.Fuzz(func(t *testing.T, data []byte) {})\n}\n' >"$SRC/ceiling_test.go"
  DIR=. FUNC=FuzzNothing
else
  SRC="$WORK/mqttlab"
  mkdir -p "$SRC"
  git -C "$ROOT" archive HEAD | tar -x -C "$SRC"
  FUNC="Fuzz$NAME"
fi

echo "== build $FUNC of ./$DIR"
cd "$SRC"
go get "github.com/AdamKorcz/go-118-fuzz-build/testing@$BUILDER_VERSION" 2>&1 | grep -v '^go: added' || true
"$GOBIN/go-118-fuzz-build" -o "$WORK/target.a" -func "$FUNC" "./$DIR"
"$CLANG" -o "$WORK/target" "$WORK/target.a" -fsanitize=fuzzer

echo "== run $FUNC for ${SECONDS_TO_RUN}s, one process, empty corpus"
mkdir -p "$WORK/corpus"
if ! "$WORK/target" -max_total_time="$SECONDS_TO_RUN" -print_final_stats=1 "$WORK/corpus" >"$WORK/log" 2>&1; then
  tail -40 "$WORK/log"
  echo "libfuzzer-local: $FUNC failed (a crasher, or the build is broken)" >&2
  exit 1
fi
grep -E '^#[0-9]+[[:space:]]+DONE|^stat::(number_of_executed_units|average_exec_per_sec)' "$WORK/log"
