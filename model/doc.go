// Package model is the abstract MQTT specification the lab checks runs
// against. It imports no package of this project: the spec shares no code with
// what it checks.
package model
