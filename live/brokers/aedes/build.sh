#!/bin/sh
# Installs Aedes (package-lock.json) into node_modules/ here, once.
set -e
cd "$(dirname "$0")"
command -v node >/dev/null 2>&1 || { echo "aedes broker: node not found (apt-get install nodejs npm)" >&2; exit 1; }
if ! node -e 'import("aedes").then(() => process.exit(0), () => process.exit(1))' 2>/dev/null; then
	command -v npm >/dev/null 2>&1 || { echo "aedes broker: npm not found (apt-get install npm)" >&2; exit 1; }
	npm ci --no-audit --no-fund
fi
