#!/bin/sh
# Checks what the mosquitto-clients adapter needs (Debian: mosquitto-clients,
# python3); .ci/run installs them.
for tool in mosquitto_sub mosquitto_pub /usr/bin/python3; do
	command -v "$tool" >/dev/null 2>&1 || { echo "mosquitto-clients adapter: $tool not found (apt-get install mosquitto-clients python3)" >&2; exit 1; }
done
