// Package engine is the sans-IO MQTT engine: a client and a broker written as
// pure state machines.
//
// Contract. Client.Step and Broker.Step take the current virtual time and one
// Event and return the Actions the caller must carry out, in the order they
// must take effect (persist before send; deliver before ack when the policy
// says so). The engine never reads a clock, starts a goroutine, draws a random
// number, or iterates a map in unsorted order, so the same events give the same
// actions everywhere. The world that drives it (package sim, or package live
// over TCP) owns time, bytes, disks and crashes, and may crash the node between
// any two actions.
//
// Durable state leaves the engine only as Persist actions and comes back only
// through NewClient/NewBroker(cfg, restored): that is the reboot path.
//
// Policies select between the legacy behaviours of the three seed pull
// requests and their fixes; every legacy knob's name starts with Legacy.
package engine
