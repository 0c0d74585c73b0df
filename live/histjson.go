package live

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/mqttlab/mqttlab/model"
)

// kindNames name the model's event kinds in history.jsonl.
var kindNames = map[model.Kind]string{
	model.Accepted: "Accepted", model.Acknowledged: "Acknowledged", model.Sent: "Sent", model.Received: "Received",
	model.Delivered: "Delivered", model.Subscribed: "Subscribed", model.Unsubscribed: "Unsubscribed",
	model.ConnOpened: "ConnOpened", model.ConnClosed: "ConnClosed", model.Connected: "Connected",
	model.Crash: "Crash", model.Restart: "Restart", model.StateLost: "StateLost", model.Partition: "Partition",
	model.Heal: "Heal", model.LivenessStart: "LivenessStart", model.Quiescent: "Quiescent", model.Stuck: "Stuck",
	model.Failed: "Failed", model.Refused: "Refused",
}

// packetNames name MQTT packet types.
var packetNames = [...]string{"?", "CONNECT", "CONNACK", "PUBLISH", "PUBACK", "PUBREC", "PUBREL", "PUBCOMP",
	"SUBSCRIBE", "SUBACK", "UNSUBSCRIBE", "UNSUBACK", "PINGREQ", "PINGRESP", "DISCONNECT", "AUTH"}

func kindName(k model.Kind) string {
	if n, ok := kindNames[k]; ok {
		return n
	}
	return fmt.Sprintf("Kind(%d)", k)
}

func packetName(t uint8) string {
	if int(t) < len(packetNames) {
		return packetNames[t]
	}
	return fmt.Sprintf("type %d", t)
}

// eventJSON is one history.jsonl line.
type eventJSON struct {
	Step           int         `json:"step"`
	Kind           string      `json:"kind"`
	Time           int64       `json:"time_ns"`
	Node           string      `json:"node,omitempty"`
	Peer           string      `json:"peer,omitempty"`
	Packet         *packetJSON `json:"packet,omitempty"`
	Msg            string      `json:"msg,omitempty"`
	Topic          string      `json:"topic,omitempty"`
	Filter         string      `json:"filter,omitempty"`
	QoS            uint8       `json:"qos,omitempty"`
	Retain         bool        `json:"retain,omitempty"`
	Persistent     bool        `json:"persistent,omitempty"`
	CleanStart     bool        `json:"clean_start,omitempty"`
	SessionPresent bool        `json:"session_present,omitempty"`
	HadState       bool        `json:"had_state,omitempty"`
	Version        uint8       `json:"version,omitempty"`
	ReceiveMax     uint16      `json:"receive_max,omitempty"`
	Point          uint8       `json:"crash_point,omitempty"`
	Reason         string      `json:"reason,omitempty"`
}

// packetJSON is a packet in history.jsonl.
type packetJSON struct {
	Type     string `json:"type"`
	ID       uint16 `json:"id,omitempty"`
	QoS      uint8  `json:"qos,omitempty"`
	Dup      bool   `json:"dup,omitempty"`
	Retain   bool   `json:"retain,omitempty"`
	Reason   uint8  `json:"reason,omitempty"`
	Topic    string `json:"topic,omitempty"`
	Msg      string `json:"msg,omitempty"`
	Sessions bool   `json:"session_present,omitempty"`
	Clean    bool   `json:"clean_start,omitempty"`
	Filter   string `json:"filter,omitempty"`
	// TopicAlias: a PUBLISH's Topic Alias, a CONNECT's Topic Alias Maximum.
	TopicAlias uint16 `json:"topic_alias,omitempty"`
	// SubIDs: a PUBLISH's Subscription Identifiers, a SUBSCRIBE's one.
	SubIDs []uint32 `json:"sub_ids,omitempty"`
}

// writeHistory writes h as JSON lines, one event per line.
func writeHistory(path string, h model.History) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	for i := range h.Events {
		e := &h.Events[i]
		j := eventJSON{Step: i, Kind: kindName(e.Kind), Time: e.Time, Node: e.Node, Peer: e.Peer, Msg: e.Msg,
			Topic: e.Topic, Filter: e.Filter, QoS: e.QoS, Retain: e.Retain, Persistent: e.Persistent,
			CleanStart: e.CleanStart, SessionPresent: e.SessionPresent, HadState: e.HadState, Version: e.Version,
			ReceiveMax: e.ReceiveMax, Point: uint8(e.Point), Reason: e.Reason}
		if p := e.Packet; p.Type != 0 {
			j.Packet = &packetJSON{Type: packetName(p.Type), ID: p.ID, QoS: p.QoS, Dup: p.Dup, Retain: p.Retain,
				Reason: p.Reason, Topic: p.Topic, Msg: p.Msg, Sessions: p.Sessions, Clean: p.Clean, Filter: p.Filter, TopicAlias: p.TopicAlias, SubIDs: p.SubIDs}
		}
		if err := enc.Encode(j); err != nil {
			f.Close()
			return err
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// FormatEvent is one event as a readable line: step, kind, who, and what.
func FormatEvent(step int, e *model.Event) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%6d %-13s %s", step, kindName(e.Kind), e.Node)
	if e.Peer != "" {
		b.WriteString("->" + e.Peer)
	}
	if p := e.Packet; p.Type != 0 && (e.Kind == model.Sent || e.Kind == model.Received) {
		fmt.Fprintf(&b, " %s", packetName(p.Type))
		if p.ID != 0 {
			fmt.Fprintf(&b, " id=%d", p.ID)
		}
		if p.Type == model.PUBLISH {
			fmt.Fprintf(&b, " qos=%d dup=%v msg=%s", p.QoS, p.Dup, p.Msg)
		}
		if p.Type == model.CONNACK {
			fmt.Fprintf(&b, " sp=%v reason=%#x", p.Sessions, p.Reason)
		}
		if p.Type == model.CONNECT {
			fmt.Fprintf(&b, " clean=%v", p.Clean)
		}
	}
	if e.Msg != "" {
		fmt.Fprintf(&b, " msg=%s qos=%d", e.Msg, e.QoS)
	}
	switch e.Kind {
	case model.Connected:
		fmt.Fprintf(&b, " clean=%v sp=%v had_state=%v", e.CleanStart, e.SessionPresent, e.HadState)
	case model.Subscribed:
		fmt.Fprintf(&b, " %s qos=%d persistent=%v", e.Filter, e.QoS, e.Persistent)
	}
	if e.Reason != "" {
		b.WriteString(" " + clip(e.Reason, 200))
	}
	return b.String()
}
