package engine

import (
	"bufio"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/mqttlab/mqttlab/engine/packet"
)

// The client scenario scripts in testdata/client/*.txt drive a Client with
// events and hand-fed broker packets and compare every action it returns.
//
//	config preset=fixed v=5 ka=60 window=10 rm=65535 clean=0 aliasmax=N startid=N mut=resend-nodup
//	(a Complete failed for the broker's Maximum Packet Size ends in "too-large";
//	recv CONNACK takes sp=, rm=, ka= and maxsize=)
//	       will=topic:qos:retain:payload[:delay]
//	at 10s                          set the virtual time
//	> connect 1 [clean]             an event (see scriptEvent)
//	< send PUBLISH q=1 id=1 ...     the actions it must return, in order
//	? store out/00001 session       the durable store's keys must be exactly these
//	? stuck | ? notstuck
//	reboot                          NewClient from the durable store
//	crash-after 1                   the next event's Persist actions after the
//	                                first N never reach the store (a crash part
//	                                way through the step; reboot next)
//
// Every event's actions must match the "<" lines after it exactly: no more,
// no fewer, in order.

// harness drives a Client like a tiny world: it keeps the durable store the
// Persist actions describe and decodes what the client sends.
type harness struct {
	t     fataler
	cfg   ClientConfig
	c     *Client
	now   Time
	conn  ConnID
	store map[string][]byte
	acts  []Action // the last step's actions (a copy)
	keep  int      // crash-after: Persist actions of the next step that reach the store, -1 all
}

// fataler is what the harness needs of *testing.T and *rapid.T.
type fataler interface {
	Helper()
	Fatalf(format string, args ...any)
}

func newHarness(t fataler, cfg ClientConfig) *harness {
	t.Helper()
	c, err := NewClient(cfg, nil)
	if err != nil {
		t.Fatalf("NewClient: %v", err)
	}
	return &harness{t: t, cfg: cfg, c: c, store: map[string][]byte{}, keep: -1}
}

// step runs one event, applies its Persist actions to the store and returns
// a copy of the actions.
func (h *harness) step(ev Event) []Action {
	h.t.Helper()
	acts := slices.Clone(h.c.Step(h.now, ev))
	keep := h.keep
	h.keep = -1
	for _, a := range acts {
		if p, ok := a.(Persist); ok {
			if keep == 0 {
				continue // the crash came first
			}
			keep--
			switch p.Op {
			case Put:
				h.store[p.Key] = slices.Clone(p.Value)
			case Delete:
				delete(h.store, p.Key)
			}
		}
	}
	h.acts = acts
	return acts
}

// records returns the store's records, sorted by key.
func (h *harness) records() []Record {
	keys := make([]string, 0, len(h.store))
	for k := range h.store {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	recs := make([]Record, len(keys))
	for i, k := range keys {
		recs[i] = Record{Key: k, Value: h.store[k]}
	}
	return recs
}

// reboot rebuilds the client from the durable store.
func (h *harness) reboot() {
	h.t.Helper()
	c, err := NewClient(h.cfg, h.records())
	if err != nil {
		h.t.Fatalf("NewClient after reboot: %v", err)
	}
	h.c = c
}

// recv feeds one encoded broker packet on the current connection.
func (h *harness) recv(p packet.Packet) []Action {
	h.t.Helper()
	b, err := packet.Append(nil, h.cfg.Version, p)
	if err != nil {
		h.t.Fatalf("encoding %s: %v", p.Type(), err)
	}
	return h.step(BytesReceived{Conn: h.conn, Data: b})
}

// summarize renders actions in the script's "<" notation; Send is decoded
// from its bytes, not taken from its Packet field.
func (h *harness) summarize(acts []Action) []string {
	out := make([]string, 0, len(acts))
	for _, a := range acts {
		out = append(out, h.summary(a))
	}
	return out
}

func (h *harness) summary(a Action) string {
	switch a := a.(type) {
	case Dial:
		return "dial"
	case Send:
		p, n, err := packet.Decode(h.cfg.Version, a.Data, 0)
		if err != nil || n != len(a.Data) {
			return fmt.Sprintf("send UNDECODABLE %x (%v)", a.Data, err)
		}
		if a.Packet == nil || a.Packet.Type() != p.Type() {
			return "send MISMATCHED-PACKET " + fmtPacket(p)
		}
		return "send " + fmtPacket(p)
	case CloseConn:
		if a.Reason != nil {
			return "close error"
		}
		return "close"
	case Persist:
		s := "put "
		if a.Op == Delete {
			s = "del "
		}
		s += a.Key
		if !a.Sync {
			s += " nosync"
		}
		return s
	case SetTimer:
		return fmt.Sprintf("timer %d at %s", a.Timer, fmtDur(Duration(a.At)))
	case CancelTimer:
		return fmt.Sprintf("cancel %d", a.Timer)
	case Deliver:
		m := a.Msg
		return fmt.Sprintf("deliver %d q=%d id=%d dup=%d topic=%s payload=%s", a.Delivery, m.QoS, m.PacketID, b2i(m.Dup), m.Topic, m.Payload)
	case Complete:
		s := fmt.Sprintf("complete %d %s", a.Cmd, map[Result]string{Accepted: "accepted", Acknowledged: "acknowledged", Failed: "failed"}[a.Result])
		if len(a.Reasons) > 0 {
			s += " codes=" + fmtCodes(a.Reasons)
		}
		if a.Session {
			s += " sp=1"
		}
		if errors.Is(a.Err, ErrClientPacketTooLarge) {
			s += " too-large"
		}
		return s
	}
	return fmt.Sprintf("unknown action %T", a)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func fmtDur(d Duration) string {
	if d%Second == 0 {
		return fmt.Sprintf("%ds", d/Second)
	}
	return fmt.Sprintf("%dms", d/Millisecond)
}

func parseDur(s string) (Duration, error) {
	if v, ok := strings.CutSuffix(s, "ms"); ok {
		n, err := strconv.ParseInt(v, 10, 64)
		return n * Millisecond, err
	}
	if v, ok := strings.CutSuffix(s, "s"); ok {
		n, err := strconv.ParseInt(v, 10, 64)
		return n * Second, err
	}
	return 0, fmt.Errorf("duration %q needs s or ms", s)
}

func fmtCodes(rs []packet.ReasonCode) string {
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = fmt.Sprintf("%#02x", byte(r))
	}
	return strings.Join(parts, ",")
}

// fmtPacket renders a packet as "TYPE key=value ...".
func fmtPacket(p packet.Packet) string {
	rc := func(r packet.ReasonCode) string {
		if r == 0 {
			return ""
		}
		return fmt.Sprintf(" rc=%#02x", byte(r))
	}
	switch p := p.(type) {
	case *packet.Connect:
		s := fmt.Sprintf("CONNECT id=%s clean=%d ka=%d", p.ClientID, b2i(p.CleanStart), p.KeepAlive)
		if p.Props.Present.Has(packet.PropSessionExpiry) {
			s += fmt.Sprintf(" sei=%d", p.Props.SessionExpiry)
		}
		if p.Props.Present.Has(packet.PropReceiveMaximum) {
			s += fmt.Sprintf(" rm=%d", p.Props.ReceiveMaximum)
		}
		if p.Props.Present.Has(packet.PropTopicAliasMaximum) {
			s += fmt.Sprintf(" tam=%d", p.Props.TopicAliasMaximum)
		}
		if w := p.Will; w != nil {
			s += fmt.Sprintf(" will=%s:%d:%d:%s", w.Topic, w.QoS, b2i(w.Retain), w.Payload)
			if w.Props.Present.Has(packet.PropWillDelay) {
				s += fmt.Sprintf(" willdelay=%d", w.Props.WillDelay)
			}
		}
		return s
	case *packet.Connack:
		return fmt.Sprintf("CONNACK sp=%d", b2i(p.SessionPresent)) + rc(p.Reason)
	case *packet.Publish:
		s := fmt.Sprintf("PUBLISH q=%d", p.QoS)
		if p.QoS > 0 {
			s += fmt.Sprintf(" id=%d", p.PacketID)
		}
		s += fmt.Sprintf(" dup=%d", b2i(p.Dup))
		if p.Retain {
			s += " retain=1"
		}
		if p.Props.Present.Has(packet.PropMessageExpiry) {
			s += fmt.Sprintf(" exp=%d", p.Props.MessageExpiry)
		}
		return s + fmt.Sprintf(" topic=%s payload=%s", p.Topic, p.Payload)
	case *packet.Puback:
		return fmt.Sprintf("PUBACK id=%d", p.PacketID) + rc(p.Reason)
	case *packet.Pubrec:
		return fmt.Sprintf("PUBREC id=%d", p.PacketID) + rc(p.Reason)
	case *packet.Pubrel:
		return fmt.Sprintf("PUBREL id=%d", p.PacketID) + rc(p.Reason)
	case *packet.Pubcomp:
		return fmt.Sprintf("PUBCOMP id=%d", p.PacketID) + rc(p.Reason)
	case *packet.Subscribe:
		subs := make([]string, len(p.Subs))
		for i, s := range p.Subs {
			subs[i] = fmt.Sprintf("%s:%d", s.Filter, s.QoS)
		}
		s := fmt.Sprintf("SUBSCRIBE id=%d subs=%s", p.PacketID, strings.Join(subs, ","))
		for _, id := range p.Props.SubscriptionIDs {
			s += fmt.Sprintf(" subid=%d", id)
		}
		return s
	case *packet.Suback:
		return fmt.Sprintf("SUBACK id=%d codes=%s", p.PacketID, fmtCodes(p.Reasons))
	case *packet.Unsubscribe:
		return fmt.Sprintf("UNSUBSCRIBE id=%d filters=%s", p.PacketID, strings.Join(p.Filters, ","))
	case *packet.Unsuback:
		return fmt.Sprintf("UNSUBACK id=%d codes=%s", p.PacketID, fmtCodes(p.Reasons))
	case *packet.Pingreq:
		return "PINGREQ"
	case *packet.Pingresp:
		return "PINGRESP"
	case *packet.Disconnect:
		return "DISCONNECT" + rc(p.Reason)
	}
	return "UNKNOWN " + p.Type().String()
}

// kv parses "key=value" tokens.
func kv(tokens []string) (map[string]string, error) {
	m := map[string]string{}
	for _, t := range tokens {
		k, v, ok := strings.Cut(t, "=")
		if !ok {
			return nil, fmt.Errorf("token %q is not key=value", t)
		}
		m[k] = v
	}
	return m, nil
}

func atoi(m map[string]string, k string) int {
	n, err := strconv.ParseInt(m[k], 0, 64)
	if err != nil {
		return 0
	}
	return int(n)
}

func parseCodes(s string) []packet.ReasonCode {
	if s == "" {
		return nil
	}
	var out []packet.ReasonCode
	for _, p := range strings.Split(s, ",") {
		n, _ := strconv.ParseUint(p, 0, 8)
		out = append(out, packet.ReasonCode(n))
	}
	return out
}

// parsePacket builds a broker packet from the script notation.
func parsePacket(spec string) (packet.Packet, error) {
	f := strings.Fields(spec)
	if len(f) == 0 {
		return nil, fmt.Errorf("empty packet")
	}
	m, err := kv(f[1:])
	if err != nil {
		return nil, err
	}
	id := uint16(atoi(m, "id"))
	rc := packet.ReasonCode(atoi(m, "rc"))
	switch f[0] {
	case "CONNACK":
		p := &packet.Connack{SessionPresent: m["sp"] == "1", Reason: rc}
		if v, ok := m["rm"]; ok {
			n, _ := strconv.Atoi(v)
			p.Props.Present = p.Props.Present.With(packet.PropReceiveMaximum)
			p.Props.ReceiveMaximum = uint16(n)
		}
		if v, ok := m["ka"]; ok {
			n, _ := strconv.Atoi(v)
			p.Props.Present = p.Props.Present.With(packet.PropServerKeepAlive)
			p.Props.ServerKeepAlive = uint16(n)
		}
		if v, ok := m["maxsize"]; ok {
			n, _ := strconv.Atoi(v)
			p.Props.Present = p.Props.Present.With(packet.PropMaximumPacketSize)
			p.Props.MaximumPacketSize = uint32(n)
		}
		return p, nil
	case "PUBLISH":
		p := &packet.Publish{QoS: packet.QoS(atoi(m, "q")), PacketID: id, Dup: m["dup"] == "1", Retain: m["retain"] == "1",
			Topic: []byte(m["topic"]), Payload: []byte(m["payload"])}
		if v, ok := m["alias"]; ok {
			n, _ := strconv.Atoi(v)
			p.Props.Present = p.Props.Present.With(packet.PropTopicAlias)
			p.Props.TopicAlias = uint16(n)
		}
		return p, nil
	case "PUBACK":
		return &packet.Puback{PacketID: id, Reason: rc}, nil
	case "PUBREC":
		return &packet.Pubrec{PacketID: id, Reason: rc}, nil
	case "PUBREL":
		return &packet.Pubrel{PacketID: id, Reason: rc}, nil
	case "PUBCOMP":
		return &packet.Pubcomp{PacketID: id, Reason: rc}, nil
	case "SUBACK":
		return &packet.Suback{PacketID: id, Reasons: parseCodes(m["codes"])}, nil
	case "UNSUBACK":
		return &packet.Unsuback{PacketID: id, Reasons: parseCodes(m["codes"])}, nil
	case "PINGRESP":
		return &packet.Pingresp{}, nil
	case "DISCONNECT":
		return &packet.Disconnect{Reason: rc}, nil
	}
	return nil, fmt.Errorf("unknown packet type %q", f[0])
}

// scriptConfig builds a config from a "config" line.
func scriptConfig(tokens []string) (ClientConfig, error) {
	m, err := kv(tokens)
	if err != nil {
		return ClientConfig{}, err
	}
	name := m["preset"]
	if name == "" {
		name = "fixed"
	}
	pr, err := PresetByName(name)
	if err != nil {
		return ClientConfig{}, err
	}
	cfg := DefaultClientConfig("c1", pr.Client)
	cfg.KeepAlive = 0
	cfg.SessionExpiry = 0
	if v, ok := m["v"]; ok && v == "4" {
		cfg.Version = packet.V311
	}
	if _, ok := m["ka"]; ok {
		cfg.KeepAlive = uint16(atoi(m, "ka"))
	}
	if _, ok := m["aliasmax"]; ok {
		cfg.TopicAliasMaximum = uint16(atoi(m, "aliasmax"))
	}
	if _, ok := m["window"]; ok {
		cfg.InflightWindow = uint16(atoi(m, "window"))
	}
	if _, ok := m["rm"]; ok {
		cfg.ReceiveMaximum = uint16(atoi(m, "rm"))
	}
	if _, ok := m["startid"]; ok {
		cfg.StartPacketID = uint16(atoi(m, "startid"))
	}
	if v, ok := m["will"]; ok {
		w, err := scriptWill(v)
		if err != nil {
			return ClientConfig{}, err
		}
		cfg.Will = w
	}
	cfg.CleanStart = m["clean"] == "1"
	knobs := map[string]func(string) bool{
		"retransmit": func(v string) bool {
			r, ok := map[string]RetransmitStore{"none": LegacyRetransmitNone, "memory": RetransmitMemory, "durable": RetransmitDurable}[v]
			cfg.Policy.Retransmit = r
			return ok
		},
		"pubrel": func(v string) bool {
			u, ok := map[string]UnknownAck{"fail": LegacyUnknownAckFail, "answer": UnknownAckAnswer}[v]
			cfg.Policy.UnknownPubrel = u
			return ok
		},
		"pubrec": func(v string) bool {
			u, ok := map[string]UnknownAck{"fail": LegacyUnknownAckFail, "answer": UnknownAckAnswer}[v]
			cfg.Policy.UnknownPubrec = u
			return ok
		},
		"ackorder": func(v string) bool {
			a, ok := map[string]AckOrder{"before": LegacyAckBeforeCallback, "after": AckAfterCallback}[v]
			cfg.Policy.AckOrder = a
			return ok
		},
		"qos2": func(v string) bool {
			q, ok := map[string]QoS2State{"volatile": LegacyQoS2Volatile, "durable": QoS2Durable}[v]
			cfg.Policy.IncomingQoS2 = q
			return ok
		},
	}
	for k, set := range knobs {
		if v, ok := m[k]; ok && !set(v) {
			return ClientConfig{}, fmt.Errorf("bad %s=%s", k, v)
		}
	}
	mutations := map[string]Mutation{"delete-before-update": MutDeleteBeforeUpdate, "resend-nodup": MutResendWithoutDup,
		"reuse-id": MutReuseInflightID, "publish-after-pubrel": MutPublishAfterPubrel,
		"keep-alive-on-receive": MutKeepAliveOnReceive, "packet-id-zero": MutPacketIDZero,
		"republish-lost-qos2": MutRepublishLostQoS2, "ignore-broker-max-size": MutIgnoreBrokerMaxSize, "ignore-server-keep-alive": MutIgnoreServerKeepAlive}
	if v, ok := m["mut"]; ok {
		mu, ok := mutations[v]
		if !ok {
			return ClientConfig{}, fmt.Errorf("unknown mutation %q", v)
		}
		cfg.Policy.Mutations |= mu
	}
	return cfg, cfg.Validate()
}

// scriptWill reads a will in the script notation topic:qos:retain:payload[:delay].
func scriptWill(v string) (*Will, error) {
	f := strings.Split(v, ":")
	if len(f) < 4 || len(f) > 5 {
		return nil, fmt.Errorf("will %q is not topic:qos:retain:payload[:delay]", v)
	}
	q, _ := strconv.Atoi(f[1])
	w := &Will{Topic: f[0], QoS: packet.QoS(q), Retain: f[2] == "1", Payload: []byte(f[3])}
	if len(f) == 5 {
		d, _ := strconv.ParseUint(f[4], 10, 32)
		w.Delay = uint32(d)
	}
	return w, nil
}

// scriptEvent builds the event of a ">" line.
func (h *harness) scriptEvent(line string) (Event, error) {
	f := strings.Fields(line)
	if len(f) == 0 {
		return nil, fmt.Errorf("empty event")
	}
	arg := func(i int) uint64 {
		if i >= len(f) {
			return 0
		}
		n, _ := strconv.ParseUint(f[i], 10, 64)
		return n
	}
	switch f[0] {
	case "connect":
		ev := Connect{Cmd: CmdID(arg(1)), CleanStart: slices.Contains(f, "clean")}
		for _, a := range f[2:] {
			if v, ok := strings.CutPrefix(a, "will="); ok {
				w, err := scriptWill(v)
				if err != nil {
					return nil, err
				}
				ev.Will = w
			}
		}
		return ev, nil
	case "opened":
		h.conn = ConnID(arg(1))
		return ConnOpened{Conn: h.conn}, nil
	case "closed":
		return ConnClosed{Conn: ConnID(arg(1))}, nil
	case "recv":
		p, err := parsePacket(strings.TrimPrefix(line, "recv "))
		if err != nil {
			return nil, err
		}
		b, err := packet.Append(nil, h.cfg.Version, p)
		if err != nil {
			return nil, fmt.Errorf("encoding %q: %w", line, err)
		}
		return BytesReceived{Conn: h.conn, Data: b}, nil
	case "raw":
		b, err := hex.DecodeString(strings.Join(f[1:], ""))
		return BytesReceived{Conn: h.conn, Data: b}, err
	case "fire":
		return TimerFired{Timer: TimerID(arg(1))}, nil
	case "ack":
		return Ack{Delivery: DeliveryID(arg(1))}, nil
	case "disconnect":
		d := Disconnect{Cmd: CmdID(arg(1)), Abnormal: slices.Contains(f, "abnormal")}
		for _, a := range f[2:] {
			if v, ok := strings.CutPrefix(a, "reason="); ok {
				n, err := strconv.ParseUint(v, 0, 8)
				if err != nil {
					return nil, fmt.Errorf("disconnect reason %q: %w", v, err)
				}
				d.Reason = packet.ReasonCode(n)
			}
		}
		return d, nil
	case "publish", "subscribe", "unsubscribe":
		m, err := kv(f[2:])
		if err != nil {
			return nil, err
		}
		cmd := CmdID(arg(1))
		switch f[0] {
		case "publish":
			return Publish{Cmd: cmd, Topic: m["topic"], Payload: []byte(m["payload"]), QoS: packet.QoS(atoi(m, "q")), Retain: m["retain"] == "1",
				MessageExpiry: uint32(atoi(m, "exp"))}, nil
		case "subscribe":
			var subs []packet.Subscription
			for _, s := range strings.Split(m["subs"], ",") {
				flt, q, _ := strings.Cut(s, ":")
				n, _ := strconv.Atoi(q)
				subs = append(subs, packet.Subscription{Filter: flt, QoS: packet.QoS(n)})
			}
			return Subscribe{Cmd: cmd, Subs: subs, SubscriptionID: uint32(atoi(m, "subid"))}, nil
		default:
			return Unsubscribe{Cmd: cmd, Filters: strings.Split(m["filters"], ",")}, nil
		}
	}
	return nil, fmt.Errorf("unknown event %q", f[0])
}

// runScript runs one script file and reports every mismatch.
func runScript(t *testing.T, path string) *harness {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var h *harness
	var got []string // actions of the last event not yet matched
	var lastEvent string
	flush := func(lineNo int) {
		if len(got) > 0 {
			t.Errorf("%s:%d: after %q, unexpected actions:\n  %s", path, lineNo, lastEvent, strings.Join(got, "\n  "))
		}
		got = nil
	}
	record := os.Getenv("CLIENT_SCRIPT_RECORD") != "" // development aid: write path.rec with the actual actions
	var rec []string
	defer func() {
		if record {
			_ = os.WriteFile(path+".rec", []byte(strings.Join(rec, "\n")+"\n"), 0o644)
		}
	}()
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if record && !strings.HasPrefix(line, "< ") {
			if strings.HasPrefix(line, "> ") && h != nil {
				defer func() {}()
			}
			rec = append(rec, sc.Text())
		}
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if h == nil && !strings.HasPrefix(line, "config") {
			t.Fatalf("%s:%d: the first line must be config", path, n)
		}
		switch {
		case strings.HasPrefix(line, "config"):
			cfg, err := scriptConfig(strings.Fields(line)[1:])
			if err != nil {
				t.Fatalf("%s:%d: %v", path, n, err)
			}
			h = newHarness(t, cfg)
		case strings.HasPrefix(line, "> "):
			flush(n)
			lastEvent = line[2:]
			ev, err := h.scriptEvent(line[2:])
			if err != nil {
				t.Fatalf("%s:%d: %v", path, n, err)
			}
			got = h.summarize(h.step(ev))
			if record {
				for _, g := range got {
					rec = append(rec, "< "+g)
				}
			}
		case strings.HasPrefix(line, "< "):
			want := line[2:]
			if len(got) == 0 {
				t.Errorf("%s:%d: after %q, missing action %q", path, n, lastEvent, want)
				continue
			}
			if got[0] != want {
				t.Errorf("%s:%d: after %q\n  got  %s\n  want %s", path, n, lastEvent, got[0], want)
			}
			got = got[1:]
		case strings.HasPrefix(line, "at "):
			flush(n)
			d, err := parseDur(strings.TrimSpace(line[3:]))
			if err != nil {
				t.Fatalf("%s:%d: %v", path, n, err)
			}
			h.now = Time(d)
		case line == "reboot":
			flush(n)
			h.reboot()
		case strings.HasPrefix(line, "crash-after "):
			flush(n)
			k, err := strconv.Atoi(strings.TrimSpace(line[len("crash-after "):]))
			if err != nil || k < 0 {
				t.Fatalf("%s:%d: crash-after wants a count of Persist actions: %q", path, n, line)
			}
			h.keep = k
		case line == "lose-qos2":
			flush(n)
			h.c.LoseIncomingQoS2State()
		case strings.HasPrefix(line, "? store"):
			flush(n)
			want := strings.Fields(line)[2:]
			keys := []string{}
			for _, r := range h.records() {
				keys = append(keys, r.Key)
			}
			slices.Sort(want)
			if !slices.Equal(keys, want) {
				t.Errorf("%s:%d: store keys %v, want %v", path, n, keys, want)
			}
		case line == "? stuck" || line == "? notstuck":
			flush(n)
			if (h.c.Stuck() != nil) != (line == "? stuck") {
				t.Errorf("%s:%d: Stuck() = %v", path, n, h.c.Stuck())
			}
		default:
			t.Fatalf("%s:%d: cannot parse %q", path, n, line)
		}
	}
	flush(n)
	return h
}

// TestClientScripts runs every scenario script under testdata/client.
func TestClientScripts(t *testing.T) {
	files, err := filepath.Glob("testdata/client/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scripts in testdata/client: %v", err)
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".txt"), func(t *testing.T) { runScript(t, f) })
	}
}
