package model

import "slices"

// Copies handed on within a shared subscription group. A broker SHOULD
// send the messages a member's session still held to another member when
// that session ends (MQTT 5.0 §4.8.2: "If the Client's Session terminates
// before the Client reconnects, the Server SHOULD send the Application
// Message to another Client that is subscribed to the same Shared
// Subscription"; a QoS 2 one already sent excepted [MQTT-4.8.2-5]). Such a
// copy enters the other member's queue at that end, not at the broker's
// receipt of the message: behind the later copies of its publisher that
// member already holds. The drop judge reads the ends here to tell when a
// member's copy may have arrived that late (dropJudge.handOnAt).

// sessionEndSteps lists, per client, the steps in order at which the
// broker may have ended its session, from the broker's events alone: its
// receipt of a Clean Start CONNECT [MQTT-3.1.2-4], and the first step at
// which the session may have expired since its connection ended
// [MQTT-4.1.0-2] (at that end for an interval of 0 [MQTT-3.1.2-23] or a
// 3.1.1 Clean Session=1 session [MQTT-3.1.2-6]; SessionWatch.expired),
// unless a CONNECT of the client came before.
func sessionEndSteps(x *index) [][]int32 {
	ends := make([][]int32, len(x.nodes))
	ss := make([]SessionWatch, len(x.nodes))
	v5 := make([]bool, len(x.nodes))
	pending := make([]int32, len(x.nodes)) // client -> its expiry's first step + 1, 0: none
	ev := x.h.Events
	seen := make([]bool, len(x.nodes))
	for i, k := range x.kinds { // a client's first CONNECT is as its first Connected says (sessionEnds)
		if d := &x.ev[i]; k.kind == Connected && !seen[d.node] {
			seen[d.node], v5[d.node] = true, ev[i].Version >= 5
		}
	}
	expiresAt := func(c int32, i int) {
		s := &ss[c]
		switch {
		case !s.known || s.online:
		case s.expired(ev[i].Time):
			ends[c] = append(ends[c], int32(i))
		case s.v5 && s.expiry != ExpiryNever:
			t := s.offAt + int64(s.expiry)*1e9
			k, _ := slices.BinarySearchFunc(ev[i:], t, func(e Event, t int64) int {
				switch {
				case e.Time < t:
					return -1
				case e.Time > t:
					return 1
				}
				return 0
			})
			if i+k < len(ev) {
				pending[c] = int32(i+k) + 1
			}
		}
	}
	for i, k := range x.kinds {
		e, d := &ev[i], &x.ev[i]
		if k.kind == Connected && d.node != brokerID {
			v5[d.node] = e.Version >= 5
		}
		if d.node != brokerID || !expiryDoubtEvents.has(k) {
			continue
		}
		switch e.Kind {
		case Crash:
			for c := range ss {
				was := ss[c].online
				ss[c].Ended(e.Time)
				if was {
					expiresAt(int32(c), i)
				}
			}
		case ConnClosed:
			c := x.peerOf(i)
			was := ss[c].online
			ss[c].Ended(e.Time)
			if was {
				expiresAt(c, i)
			}
		case Received:
			c, p := x.peerOf(i), &e.Packet
			if p.Type != CONNECT {
				ss[c].Disconnect(p.ExpirySet, p.Expiry)
				continue
			}
			if pending[c] != 0 && int(pending[c]-1) <= i {
				ends[c] = append(ends[c], pending[c]-1)
			}
			pending[c] = 0
			if p.Clean {
				ends[c] = append(ends[c], int32(i)) // [MQTT-3.1.2-4]
			}
			ss[c].Connect(e.Time, v5[c], p.Clean, p.Expiry)
		case Sent:
			ss[x.peerOf(i)].Connack(e.Packet.Reason)
		}
	}
	for c, p := range pending {
		if p != 0 {
			ends[c] = append(ends[c], p-1)
		}
	}
	for c := range ends {
		slices.Sort(ends[c])
	}
	return ends
}

// handOnAt returns the last step in (ref, d] at which the session of
// another node that had asked the broker for one of client c's shared
// subscriptions (its SUBSCRIBE as the broker received it) may have ended,
// handing c the copy it held of a message the broker received at ref
// (MQTT 5.0 §4.8.2), or -1 when there is none: then c's copy arrived with
// that receipt.
func (j *dropJudge) handOnAt(c, ref int32, d int) int32 {
	if j.ends == nil {
		j.ends = sessionEndSteps(j.x)
		j.sharers = sharersOf(j.x)
	}
	last := int32(-1)
	for _, n := range j.sharers[c] {
		for _, e := range j.ends[n.node] {
			if e > ref && int(e) <= d && e > n.joined {
				last = max(last, e)
			}
		}
	}
	return last
}

// sharer is a node that asked the broker for a shared subscription
// another client holds too, from step joined (its first such SUBSCRIBE).
type sharer struct{ node, joined int32 }

// sharersOf lists, per client, the other nodes that asked the broker for
// one of the shared subscriptions it asked for: the members its group may
// hand copies on from.
func sharersOf(x *index) [][]sharer {
	type join struct {
		node   int32
		filter string
		step   int32
	}
	var joins []join
	for i, k := range x.kinds {
		if k.kind != Received || k.typ != SUBSCRIBE || x.ev[i].node != brokerID {
			continue
		}
		f := x.h.Events[i].Packet.Filter
		if _, shared := sharedInner(f); shared && !slices.ContainsFunc(joins, func(o join) bool { return o.node == x.peerOf(i) && o.filter == f }) {
			joins = append(joins, join{x.peerOf(i), f, int32(i)})
		}
	}
	out := make([][]sharer, len(x.nodes))
	for _, a := range joins {
		for _, b := range joins {
			if a.filter == b.filter && a.node != b.node {
				out[a.node] = append(out[a.node], sharer{b.node, b.step})
			}
		}
	}
	return out
}
