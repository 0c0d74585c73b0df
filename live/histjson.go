package live

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/mqttlab/mqttlab/findings"
	"github.com/mqttlab/mqttlab/model"
)

// kindNames name the model's event kinds in history.jsonl.
var kindNames = map[model.Kind]string{
	model.Accepted: "Accepted", model.Acknowledged: "Acknowledged", model.Sent: "Sent", model.Received: "Received",
	model.Delivered: "Delivered", model.Subscribed: "Subscribed", model.Unsubscribed: "Unsubscribed",
	model.ConnOpened: "ConnOpened", model.ConnClosed: "ConnClosed", model.Connected: "Connected",
	model.Crash: "Crash", model.Restart: "Restart", model.StateLost: "StateLost", model.Partition: "Partition",
	model.Heal: "Heal", model.LivenessStart: "LivenessStart", model.Quiescent: "Quiescent", model.Stuck: "Stuck",
	model.Failed: "Failed", model.Refused: "Refused", model.Cutoff: "Cutoff", model.Cut: "Cut", model.Dropped: "Dropped", model.ACL: "ACL",
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
	// The rest of model.Packet, so that ReadHistory gives back what the
	// model judged: options, keep-alive, sizes, expiry, will.
	Opts      uint8  `json:"opts,omitempty"`
	KeepAlive uint16 `json:"keep_alive,omitempty"`
	MaxSize   uint32 `json:"max_size,omitempty"`
	Size      uint32 `json:"size,omitempty"`
	Expiry    uint32 `json:"expiry,omitempty"`
	ExpirySet bool   `json:"expiry_set,omitempty"`
	Will      bool   `json:"will,omitempty"`
	WillDelay uint32 `json:"will_delay,omitempty"`
	// Payload, when it is not Msg.
	Payload string `json:"payload,omitempty"`
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
				Reason: p.Reason, Topic: p.Topic, Msg: p.Msg, Sessions: p.Sessions, Clean: p.Clean, Filter: p.Filter, TopicAlias: p.TopicAlias, SubIDs: p.SubIDs,
				Opts: p.Opts, KeepAlive: p.KeepAlive, MaxSize: p.MaxSize, Size: p.Size, Expiry: p.Expiry, ExpirySet: p.ExpirySet,
				Will: p.Will, WillDelay: p.WillDelay}
			if p.Payload != p.Msg {
				j.Packet.Payload = p.Payload
			}
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

// FormatEvent is one event as a readable line: step, kind, who, and what
// (findings.FormatEvent: acknowledgements carry no QoS).
func FormatEvent(step int, e *model.Event) string { return findings.FormatEvent(step, e) }

// kindByName and packetByName invert kindNames and packetNames.
var (
	kindByName   = map[string]model.Kind{}
	packetByName = map[string]uint8{}
)

func init() {
	for k, n := range kindNames {
		kindByName[n] = k
	}
	for t, n := range packetNames {
		packetByName[n] = uint8(t)
	}
}

// ReadHistory reads a history.jsonl that writeHistory wrote (a run
// directory's), so a recorded run can be judged again.
func ReadHistory(path string) (model.History, error) {
	var h model.History
	f, err := os.Open(path)
	if err != nil {
		return h, err
	}
	defer f.Close()
	dec := json.NewDecoder(bufio.NewReaderSize(f, 1<<16))
	for line := 1; ; line++ {
		var j eventJSON
		if err := dec.Decode(&j); err == io.EOF {
			return h, nil
		} else if err != nil {
			return h, fmt.Errorf("%s: event %d: %w", path, line, err)
		}
		k, ok := kindByName[j.Kind]
		if !ok {
			return h, fmt.Errorf("%s: event %d: unknown kind %q", path, line, j.Kind)
		}
		e := model.Event{Kind: k, Time: j.Time, Node: j.Node, Peer: j.Peer, Msg: j.Msg, Topic: j.Topic, Filter: j.Filter,
			QoS: j.QoS, Retain: j.Retain, Persistent: j.Persistent, CleanStart: j.CleanStart, SessionPresent: j.SessionPresent,
			HadState: j.HadState, Version: j.Version, ReceiveMax: j.ReceiveMax, Point: model.CrashPoint(j.Point), Reason: j.Reason}
		if p := j.Packet; p != nil {
			t, ok := packetByName[p.Type]
			if !ok {
				return h, fmt.Errorf("%s: event %d: unknown packet type %q", path, line, p.Type)
			}
			e.Packet = model.Packet{Type: t, ID: p.ID, QoS: p.QoS, Dup: p.Dup, Retain: p.Retain, Reason: p.Reason,
				Topic: p.Topic, Msg: p.Msg, Payload: p.Msg, Sessions: p.Sessions, Clean: p.Clean, Filter: p.Filter,
				TopicAlias: p.TopicAlias, SubIDs: p.SubIDs, Opts: p.Opts, KeepAlive: p.KeepAlive, MaxSize: p.MaxSize,
				Size: p.Size, Expiry: p.Expiry, ExpirySet: p.ExpirySet, Will: p.Will, WillDelay: p.WillDelay}
			if p.Payload != "" {
				e.Packet.Payload = p.Payload
			}
		}
		h.Events = append(h.Events, e)
	}
}
