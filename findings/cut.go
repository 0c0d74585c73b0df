package findings

import (
	"slices"

	"github.com/mqttlab/mqttlab/model"
)

// flowingWindow is how close to a Stuck event a delivery must be for the
// run to count as still delivering when the liveness bound cut it.
const flowingWindow = int64(1e9)

// boundCut describes a run cut at its liveness bound while it was still
// delivering: the NoStuck violation that records it (a violation index,
// -1 when the run was not cut so) and when the liveness phase started.
type boundCut struct {
	stuck         int
	livenessStart int
	deliveries    int // in the last flowingWindow before the Stuck
}

// cutAtBound finds whether the run ended in a Stuck event with deliveries
// in the second before it: then the bound, not the subjects, ended it.
func (g *grouper) cutAtBound() boundCut {
	c := boundCut{stuck: -1, livenessStart: -1}
	evs := g.h.Events
	stuck := -1
	for i := len(evs) - 1; i >= 0; i-- {
		if evs[i].Kind == model.Stuck {
			stuck = i
			break
		}
	}
	if stuck < 0 {
		return c
	}
	for i := stuck - 1; i >= 0 && evs[stuck].Time-evs[i].Time <= flowingWindow; i-- {
		if evs[i].Kind == model.Delivered {
			c.deliveries++
		}
	}
	for i := range evs {
		if evs[i].Kind == model.LivenessStart {
			c.livenessStart = i
		}
	}
	if c.deliveries == 0 || c.livenessStart < 0 {
		return c
	}
	for i := range g.vs {
		if g.vs[i].Invariant == model.NoStuck {
			c.stuck = i
			break
		}
	}
	return c
}

// unsettled reports whether violation i concerns a message or packet that
// was still moving in the liveness phase: a PUBREL sent in it
// (PubrelAnswered), a message with a packet of its flow in it (NoLoss,
// FlowResume), or a message its publisher had not sent yet (NoLoss).
func (c boundCut) unsettled(g *grouper, i int) bool {
	v := &g.vs[i]
	switch v.Invariant {
	case model.PubrelAnswered:
		return v.Step > c.livenessStart
	case model.NoLoss, model.FlowResume:
	default:
		return false
	}
	if g.ix == nil {
		g.ix = newFlowIndex(g.h)
	}
	clients := g.clients[i]
	if v.Invariant == model.NoLoss && len(g.msgs[i]) > 0 && !g.reachedBroker(g.msgs[i][0]) {
		return true // its publisher still held it when the bound cut the run
	}
	for _, m := range g.msgs[i] {
		list := g.ix.byMsg[m]
		for j := len(list) - 1; j >= 0 && list[j] > c.livenessStart; j-- {
			if e := &g.h.Events[list[j]]; slices.Contains(clients, clientOf(e)) || e.Node == model.BrokerNode {
				return true
			}
		}
	}
	return false
}
