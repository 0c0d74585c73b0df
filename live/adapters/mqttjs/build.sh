#!/bin/sh
# Installs MQTT.js (package-lock.json) into node_modules/ here, once.
set -e
cd "$(dirname "$0")"
command -v node >/dev/null 2>&1 || { echo "mqttjs adapter: node not found (apt-get install nodejs npm)" >&2; exit 1; }
if ! node -e 'require("mqtt")' 2>/dev/null; then
	command -v npm >/dev/null 2>&1 || { echo "mqttjs adapter: npm not found (apt-get install npm)" >&2; exit 1; }
	npm ci --no-audit --no-fund
fi
