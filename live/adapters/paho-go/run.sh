#!/bin/sh
# Runs the paho-go adapter (built by build.sh): the long-running subject
# protocol of docs/live.md on stdin and stdout.
exec "$(dirname "$0")/.build/paho-go"
