// Package live runs the same engine in the real world: over TCP, with wall
// time and a file-backed record store. It records histories the model can
// check, so real runs are judged by the same spec as simulated ones.
package live
