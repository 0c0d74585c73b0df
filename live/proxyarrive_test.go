package live

import (
	"testing"

	"github.com/mqttlab/mqttlab/model"
)

// TestArrivalAfterBrokerDown: a chunk the proxy read while the broker was
// up, whose arrival it records only after the broker was marked down (the
// kill's first step, before its Crash is recorded), is neither recorded
// nor written: the history never shows a dead broker receiving a packet
// (a PUBCOMP recorded after the Crash read as acknowledged with no crash
// since, mosquitto run at 69d5d62). An arrival while the broker is up, on
// an open direction, is recorded and written; a black-holed direction's
// is not.
func TestArrivalAfterBrokerDown(t *testing.T) {
	pubcomp := model.Event{Kind: model.Received, Node: model.BrokerNode, Peer: "s1", Packet: model.Packet{Type: model.PUBCOMP, ID: 40}}
	cases := []struct {
		name  string
		setup func(p *Proxy, pc *proxyConn)
		write bool
	}{
		{"broker up", func(*Proxy, *proxyConn) {}, true},
		{"broker marked down after the read", func(p *Proxy, _ *proxyConn) { p.SetBrokerDown(true) }, false},
		{"direction black-holed after the read", func(_ *Proxy, pc *proxyConn) { pc.hole[Up] = true }, false},
		{"broker down, then up again", func(p *Proxy, _ *proxyConn) { p.SetBrokerDown(true); p.SetBrokerDown(false) }, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rec := NewRecorder()
			p := &Proxy{opts: ProxyOptions{Recorder: rec}}
			pc := &proxyConn{clientID: "s1"}
			c.setup(p, pc)
			write := p.arrived(pc, Up, arrival{events: []model.Event{pubcomp}})
			if got := rec.Len(); write != c.write || got != map[bool]int{true: 1, false: 0}[c.write] {
				t.Fatalf("arrived: write %v with %d events recorded, want write %v", write, got, c.write)
			}
		})
	}
}
