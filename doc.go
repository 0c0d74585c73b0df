// Package mqttlab is a deterministic simulation and fuzzing lab for an MQTT
// engine. The code lives in the subpackages; this root package holds only the
// tests that guard the layout: the import edges of ../shared/DESIGN.md and the
// determinism rules of the pure packages.
package mqttlab
