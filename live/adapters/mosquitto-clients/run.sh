#!/bin/sh
# Runs the mosquitto-clients adapter (adapter.py, Python's standard library
# only, with Debian's /usr/bin/python3): the long-running subject protocol
# of docs/live.md on stdin and stdout.
exec /usr/bin/python3 -u "$(dirname "$0")/adapter.py"
