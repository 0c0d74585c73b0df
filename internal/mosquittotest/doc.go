// Package mosquittotest starts Debian's mosquitto broker for tests and runs
// its command-line clients (mosquitto_pub, mosquitto_sub) with timeouts.
//
// Contract. Start finds the mosquitto binary (PATH, then /usr/sbin), picks a
// free loopback port, writes a config file into t.TempDir(), starts the
// broker, waits until its port accepts connections and stops it (SIGTERM,
// then wait) at t.Cleanup, dumping its log when the test failed. Every wait
// has a deadline, so a broker that never comes up fails the test rather than
// hanging it.
//
// When mosquitto is not installed the test fails under CI=true (CI installs
// it: .ci/run) and is skipped elsewhere with the install command in the skip
// message, so a developer without mosquitto can still run the rest. The skip
// message also says to rerun with `go test -count=1` after installing:
// go test caches results keyed on environment variables and files inside
// the module only, so it would replay the cached skip (RerunHint).
//
// The client-tool helpers take an address rather than a *Broker, so the same
// helpers drive this project's own broker.
package mosquittotest
