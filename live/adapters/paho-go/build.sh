#!/bin/sh
# Builds the paho-go adapter into .build/ (the tester runs this before a
# run; go's build cache makes a second build instant).
set -e
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../../.."
exec go build -o "$here/.build/paho-go" ./live/adapters/paho-go
