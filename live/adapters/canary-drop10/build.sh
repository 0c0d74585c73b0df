#!/bin/sh
# The canary wraps the paho-go adapter: build that.
exec /bin/sh "$(dirname "$0")/../paho-go/build.sh"
