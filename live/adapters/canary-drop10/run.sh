#!/bin/sh
# A canary, not a library: the paho-go adapter whose every 10th delivered
# event is dropped, as an application that loses every 10th message after
# its library acknowledged it. The tester must judge it NoLoss
# (cmd/simrun's TestLiveAdapterCanaryCaught).
"$(dirname "$0")/../paho-go/.build/paho-go" |
	awk '/"event":"delivered"/ { if (++n % 10 == 0) next } { print; fflush() }'
