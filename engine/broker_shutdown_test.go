package engine

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/mqttlab/mqttlab/engine/packet"
)

// shutdownDisk applies a broker's Persist actions to a key-value map, the way
// a world that syncs on a clean stop would keep them.
type shutdownDisk map[string][]byte

func (d shutdownDisk) apply(acts []Action) (persists int) {
	for _, a := range acts {
		p, ok := a.(Persist)
		if !ok {
			continue
		}
		persists++
		if p.Op == Put {
			d[p.Key] = p.Value
		} else {
			delete(d, p.Key)
		}
	}
	return persists
}

func (d shutdownDisk) records() []Record {
	var out []Record
	for k, v := range d {
		out = append(out, Record{Key: k, Value: v})
	}
	slices.SortFunc(out, func(x, y Record) int {
		if x.Key < y.Key {
			return -1
		}
		if x.Key > y.Key {
			return 1
		}
		return 0
	})
	return out
}

// shutdownConnect opens conn and connects a persistent session id.
func shutdownConnect(t *testing.T, b *Broker, d shutdownDisk, conn ConnID, v packet.Version, id string) {
	t.Helper()
	cp := &packet.Connect{Version: v, ClientID: id}
	if v == packet.V5 {
		cp.Props.Present = cp.Props.Present.With(packet.PropSessionExpiry)
		cp.Props.SessionExpiry = 3600
	}
	d.apply(b.Step(0, ConnOpened{Conn: conn}))
	d.apply(b.Step(0, BytesReceived{Conn: conn, Data: mustAppend(t, v, cp)}))
}

// TestBrokerShutdown: Shutdown closes every connection (v5 with DISCONNECT
// 0x8B Server shutting down, 3.1.1 without a DISCONNECT) and writes what the
// persistence policy keeps: a periodic broker whose last snapshot is older
// than the subscription writes it now, so a broker rebuilt from its records
// still routes to the subscriber; a memory-only broker writes nothing and
// forgets the session.
func TestBrokerShutdown(t *testing.T) {
	modes := []struct {
		name     string
		mode     BrokerPersistence
		restored bool // the session and its subscription survive the stop
	}{
		{"none", LegacyPersistNone, false},
		{"periodic", PersistPeriodic, true},
		{"every-change", PersistEveryChange, true},
	}
	for _, m := range modes {
		for _, v := range []packet.Version{packet.V311, packet.V5} {
			t.Run(fmt.Sprintf("%s-v%d", m.name, v), func(t *testing.T) {
				testBrokerShutdown(t, m.mode, v, m.restored)
			})
		}
	}
}

func testBrokerShutdown(t *testing.T, mode BrokerPersistence, v packet.Version, restored bool) {
	pol := BrokerPolicy{Persistence: mode, UnknownPubrel: UnknownAckAnswer, UnknownPubrec: UnknownAckAnswer, AckOrder: AckAfterCallback}
	if mode == PersistPeriodic {
		pol.SnapshotEvery = 1000 // no periodic snapshot before the stop
	}
	b, err := NewBroker(DefaultBrokerConfig(pol), nil)
	if err != nil {
		t.Fatal(err)
	}
	d := shutdownDisk{}
	shutdownConnect(t, b, d, 1, v, "s1")
	sub := &packet.Subscribe{PacketID: 1, Subs: []packet.Subscription{{Filter: "t/#", QoS: 2}}}
	d.apply(b.Step(0, BytesReceived{Conn: 1, Data: mustAppend(t, v, sub)}))
	if mode == PersistPeriodic && len(d) != 0 {
		t.Fatalf("a periodic snapshot was written before Shutdown: %v", d.records())
	}

	acts := b.Step(Time(Second), Shutdown{})
	checkShutdownCloses(t, acts, v)
	persists := d.apply(acts)
	if mode == LegacyPersistNone && persists != 0 {
		t.Fatalf("LegacyPersistNone wrote %d records on Shutdown", persists)
	}
	if mode == PersistPeriodic {
		last, ok := acts[len(acts)-1].(Persist)
		if !ok || !last.Sync {
			t.Fatalf("the shutdown snapshot does not end with a synced Persist: %#v", acts[len(acts)-1])
		}
	}
	if st := b.Stats(); st.Connections != 0 {
		t.Fatalf("%d connections left open after Shutdown", st.Connections)
	}

	// Rebuild from the records and publish: the subscription must route.
	nb, err := NewBroker(DefaultBrokerConfig(pol), d.records())
	if err != nil {
		t.Fatal(err)
	}
	if got := nb.Stats().Sessions; got != b2n(restored) {
		t.Fatalf("restored %d sessions, want %d", got, b2n(restored))
	}
	shutdownConnect(t, nb, d, 2, v, "p1")
	pub := &packet.Publish{QoS: 1, PacketID: 1, Topic: []byte("t/a"), Payload: []byte("m")}
	nb.Step(Time(2*Second), BytesReceived{Conn: 2, Data: mustAppend(t, v, pub)})
	if got := nb.Stats().Queued; got != b2n(restored) {
		t.Fatalf("%d messages queued for the offline subscriber, want %d", got, b2n(restored))
	}
}

// checkShutdownCloses checks Shutdown's connection actions: in v5 a
// DISCONNECT 0x8B first, then a CloseConn wrapping ErrBrokerShutdown.
func checkShutdownCloses(t *testing.T, acts []Action, v packet.Version) {
	t.Helper()
	var disconnects, closes int
	for _, a := range acts {
		switch a := a.(type) {
		case Send:
			dp, ok := a.Packet.(*packet.Disconnect)
			if !ok || dp.Reason != packet.ServerShuttingDown {
				t.Fatalf("Shutdown sent %#v, want only DISCONNECT 0x8B", a.Packet)
			}
			if closes > 0 {
				t.Fatalf("DISCONNECT after CloseConn")
			}
			disconnects++
		case CloseConn:
			if a.Conn != 1 || !errors.Is(a.Reason, ErrBrokerShutdown) {
				t.Fatalf("got %#v, want CloseConn of conn 1 wrapping ErrBrokerShutdown", a)
			}
			closes++
		}
	}
	wantDisc := 0
	if v == packet.V5 {
		wantDisc = 1
	}
	if disconnects != wantDisc || closes != 1 {
		t.Fatalf("got %d DISCONNECT and %d CloseConn, want %d and 1", disconnects, closes, wantDisc)
	}
}
