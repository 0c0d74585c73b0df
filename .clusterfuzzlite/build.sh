#!/bin/bash -eu
# ClusterFuzzLite build: the same targets and flags as OSS-Fuzz.
exec "$SRC/mqttlab/fuzz/oss-fuzz/build.sh"
