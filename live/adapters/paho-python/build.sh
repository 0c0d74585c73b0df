#!/bin/sh
# Checks that Debian's python3-paho-mqtt is there (.ci/run installs it).
/usr/bin/python3 -c 'import paho.mqtt.client' || { echo "paho-python adapter: /usr/bin/python3 cannot import paho.mqtt.client (apt-get install python3-paho-mqtt)" >&2; exit 1; }
