#!/bin/sh
# Runs the mqttjs adapter with Debian's Node.js and the mqtt package that
# build.sh (or .ci/run) installed into node_modules/ here: the long-running
# subject protocol of docs/live.md.
exec node "$(dirname "$0")/adapter.js"
