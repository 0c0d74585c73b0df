// Package seqchart draws a run as a sequence chart: one self-contained HTML
// page (inline CSS, script and SVG; nothing fetched; it opens from disk).
//
// It reads a model.History, the violations the model found and, if given,
// the plan text and replay command; it knows nothing of the engine or the
// simulator. The page shows, top first: the violation (its invariant,
// reason and the events it cites, model.Violation.Events, each a link
// into the chart), a message filter, zoom controls, and the chart: a lane
// per node (publishers, the broker, the other clients), each connection's
// lifetime as a bar on the lane, an arrow per packet from its Sent to its
// Received event (type, packet id, QoS, DUP and reason code on hover; a
// lost packet ends in a cross and says why: the cut, close or crash that
// ended its link), the application's events (accepted, delivered,
// acknowledged, subscribed), faults (partitions as bands between the
// client and the broker, cuts as zigzags, crashes with their crash point
// and lost writes, the time a node was down, restarts, lost QoS2 state)
// and the liveness phase as a band. The cited events are ringed and glow.
// Filtering by a message (or clicking one of its packets) dims everything
// else and lists its story: every packet and app event of it on every
// node, its acks included.
//
// Matching: a Received event is the oldest unreceived Sent packet of the
// same description between the same two nodes (a connection is a FIFO
// stream); a Sent packet never received is lost.
//
// The time axis keeps event order and, up to 30 ms, proportion: each gap
// between events gets at least a few pixels and longer gaps are drawn as
// a labelled break. Zoom scales the gaps. Only the part of the chart near
// the visible window is in the DOM, redrawn on scroll, so a run of
// thousands of events opens at once (see docs/charts.md's figure and
// TestBrowser).
package seqchart
