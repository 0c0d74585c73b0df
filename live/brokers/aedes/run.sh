#!/bin/sh
# Runs Aedes on 127.0.0.1:PORT (the first argument) with Debian's Node.js
# and the aedes package build.sh (or .ci/run) installed here.
exec node "$(dirname "$0")/broker.mjs" "$1"
