package fuzz

import (
	"errors"
	"strings"
	"testing"

	"github.com/mqttlab/mqttlab/engine"
	"github.com/mqttlab/mqttlab/engine/packet"
)

// send encodes p for conn 1 as an engine would.
func send(t *testing.T, v packet.Version, p packet.Packet) engine.Send {
	t.Helper()
	data, err := packet.Append(nil, v, p)
	if err != nil {
		t.Fatal(err)
	}
	return engine.Send{Conn: 1, Data: data, Packet: p}
}

// TestWireChecker proves each invariant of wireChecker catches its bug and
// passes the correct behaviour.
func TestWireChecker(t *testing.T) {
	proto := &packet.Error{Rule: "MQTT-x", Reason: packet.MalformedPacket, Msg: "bad"}
	ping := send(t, packet.V5, &packet.Pingreq{})
	disc := func(rc packet.ReasonCode) engine.Send { return send(t, packet.V5, &packet.Disconnect{Reason: rc}) }
	tests := []struct {
		name      string
		v         packet.Version
		connected bool
		acts      []engine.Action
		bad       error
		exempt    bool
		want      string // "" for no violation
	}{
		{"send ok", packet.V5, true, []engine.Action{ping}, nil, false, ""},
		{"send on unknown conn", packet.V5, true, []engine.Action{engine.Send{Conn: 9, Data: ping.Data, Packet: ping.Packet}}, nil, false, "never opened"},
		{"send after close", packet.V5, true, []engine.Action{engine.CloseConn{Conn: 1}, ping}, nil, false, "after it closed"},
		{"close twice", packet.V5, true, []engine.Action{engine.CloseConn{Conn: 1}, engine.CloseConn{Conn: 1}}, nil, false, "already closed"},
		{"undecodable send", packet.V5, true, []engine.Action{engine.Send{Conn: 1, Data: []byte{0x00, 0x00}, Packet: &packet.Pingreq{}}}, nil, false, "do not decode"},
		{"two packets in one send", packet.V5, true, []engine.Action{engine.Send{Conn: 1, Data: append(append([]byte{}, ping.Data...), ping.Data...), Packet: ping.Packet}}, nil, false, "first packet"},
		{"packet differs from bytes", packet.V5, true, []engine.Action{engine.Send{Conn: 1, Data: ping.Data, Packet: &packet.Pingresp{}}}, nil, false, "Send.Packet"},
		{"v5 protocol close with DISCONNECT 0x81", packet.V5, true, []engine.Action{disc(0x81), engine.CloseConn{Conn: 1, Reason: proto}}, nil, false, ""},
		{"v5 protocol close without DISCONNECT", packet.V5, true, []engine.Action{engine.CloseConn{Conn: 1, Reason: proto}}, nil, false, "without a DISCONNECT"},
		{"v5 protocol close after DISCONNECT 0x00", packet.V5, true, []engine.Action{disc(0), engine.CloseConn{Conn: 1, Reason: proto}}, nil, false, "without a DISCONNECT"},
		{"v5 client protocol error", packet.V5, true, []engine.Action{engine.CloseConn{Conn: 1, Reason: engine.ErrClientProtocol}}, nil, false, "without a DISCONNECT"},
		{"v4 protocol close", packet.V311, true, []engine.Action{engine.CloseConn{Conn: 1, Reason: proto}}, nil, false, ""},
		{"v5 close before the session", packet.V5, false, []engine.Action{engine.CloseConn{Conn: 1, Reason: proto}}, nil, false, ""},
		{"internal error", packet.V5, true, []engine.Action{engine.CloseConn{Conn: 1, Reason: engine.ErrClientInternal}}, nil, false, "internal"},
		{"internal error in Complete", packet.V5, true, []engine.Action{engine.Complete{Cmd: 1, Result: engine.Failed, Err: engine.ErrClientInternal}}, nil, false, "internal"},
		{"malformed input left open", packet.V5, true, nil, proto, false, "still open"},
		{"malformed input, stuck client", packet.V5, true, nil, proto, true, ""},
		{"malformed input closed", packet.V5, true, []engine.Action{disc(0x81), engine.CloseConn{Conn: 1, Reason: proto}}, proto, false, ""},
		{"delivery id twice", packet.V5, true, []engine.Action{engine.Deliver{Delivery: 3}, engine.Deliver{Delivery: 3}}, nil, false, "twice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWireChecker(false)
			w.opened(1, tt.v, 0)
			if tt.connected {
				w.setConnected(1)
			}
			err := w.check(tt.acts, 1, tt.bad, tt.exempt)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("unexpected violation: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("got %v, want a violation containing %q", err, tt.want)
			}
		})
	}
}

// TestWireCheckerBrokerConnack checks the broker side: a CONNACK 0 marks
// the session, and before it a v5 refusal must be a CONNACK >= 0x80.
func TestWireCheckerBrokerConnack(t *testing.T) {
	connect, err := packet.Append(nil, packet.V5, &packet.Connect{Version: packet.V5, ClientID: "a"})
	if err != nil {
		t.Fatal(err)
	}
	proto := errors.Join(engine.ErrBrokerProtocol)
	for _, tt := range []struct {
		name string
		acts []engine.Action
		want string
	}{
		{"refused with CONNACK 0x82", []engine.Action{send(t, packet.V5, &packet.Connack{Reason: 0x82}), engine.CloseConn{Conn: 1, Reason: proto}}, ""},
		{"refused silently", []engine.Action{engine.CloseConn{Conn: 1, Reason: proto}}, "without a CONNACK"},
		{"refused after CONNACK 0", []engine.Action{send(t, packet.V5, &packet.Connack{}), engine.CloseConn{Conn: 1, Reason: proto}}, "without a DISCONNECT"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := newWireChecker(true)
			w.opened(1, 0, 0)
			if err := w.peerBytes(1, connect, nil); err != nil {
				t.Fatal(err)
			}
			err := w.check(tt.acts, 1, nil, false)
			if (tt.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.want)) {
				t.Fatalf("got %v, want %q", err, tt.want)
			}
		})
	}
}
