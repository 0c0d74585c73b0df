// Package findings groups a judged history's violations into findings: one
// finding per cause, the way a maintainer of the subject would want to read
// them. It is a pure function of a history and its violations (Group), so
// the simulator and the live tester report alike; it imports only model.
//
// A finding gathers the violations of one invariant, by one subject (the
// broker, the subscribers or the publishers: client ids lose their number),
// whose reasons read alike once message ids, packet ids, steps and times
// are taken out (the packet pattern). Each finding carries its count, its
// first occurrence and its clearest one (the one whose packet-id flow is
// shortest), the excerpt of that flow (every PUBLISH, PUBACK, PUBREC,
// PUBREL and PUBCOMP of the packet ids and messages at stake, the connects,
// crashes and restarts of the nodes involved between them, and the
// application's accept, acknowledgement and delivery), the clauses of the
// run's protocol version (a 3.1.1 run cites 3.1.1 numbers: see clause.go),
// a one-paragraph reading in plain words, and the violations it explains:
// consequences listed under their cause by the explicit rules of rules.go
// (a resend the spec forbids explains the duplicate delivery and the
// out-of-order delivery of the same message to the same client), never as
// findings of their own.
//
// A lost message's finding is split by how far it got (shape.go): never
// published by its publisher, never sent to the client,
// sent and never acknowledged, or acknowledged by the client and never
// delivered to its application; each reads with who lost it. A run the
// tester cut at its liveness bound while the subjects were still
// delivering (cut.go) gets one finding of the bound, which blames no
// subject, with the end-of-run violations of what was still moving
// listed under it.
//
// Contract: every violation given to Group is counted exactly once, either
// as an occurrence of a finding or as a consequence under one; findings are
// ordered by their first occurrence's step. Group neither reads the clock
// nor iterates maps unordered: the same input gives the same findings.
package findings
