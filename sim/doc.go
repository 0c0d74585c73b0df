// Package sim is the deterministic world the engine runs in: a virtual clock,
// a virtual network, crashable disks and crash points at every step. One
// seeded source decides everything, so a seed is a replayable run.
package sim
