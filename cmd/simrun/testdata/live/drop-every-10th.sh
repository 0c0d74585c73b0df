#!/bin/sh
# A deliberately broken subscriber (the live tester's canary): mosquitto_sub
# acknowledges every message to the broker, then this script drops every
# 10th line before the application would see it. A persistent QoS 2
# subscription that loses acknowledged messages must be caught as NoLoss.
# Usage: drop-every-10th.sh PORT ID TOPIC QOS
mosquitto_sub -h 127.0.0.1 -p "$1" -c -i "$2" -t "$3" -q "$4" -v |
	awk '{ if (NR % 10 != 0) print; fflush() }'
