#!/bin/sh
# Runs the paho-python adapter with Debian's python3 and its
# python3-paho-mqtt: the long-running subject protocol of docs/live.md.
exec /usr/bin/python3 -u "$(dirname "$0")/adapter.py"
