package sim

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/mqttlab/mqttlab/engine"
	"github.com/mqttlab/mqttlab/engine/packet"
	"github.com/mqttlab/mqttlab/model"
)

// ErrPlan is wrapped by every plan parse or validation error.
var ErrPlan = errors.New("sim: bad plan")

// OpKind is what a plan step does.
type OpKind uint8

// Plan step kinds. Each has a text form (OpKind.String, then key=value
// arguments), shown with the kind.
const (
	OpConnect     OpKind = iota + 1 // connect p1 [clean]
	OpSubscribe                     // subscribe s1 filter=t/# qos=2
	OpUnsubscribe                   // unsubscribe s1 filter=t/#
	OpPublish                       // publish p1 topic=t/a qos=1 msg=p1-1 [retain]
	OpDisconnect                    // disconnect p1 [abnormal | reason=0x04]
	OpCrash                         // crash s1 [point=callback-pre [skip=N]] (now, or armed for the node's next crash point of that kind, after N others)
	OpRestart                       // restart s1
	OpStop                          // stop s1 (clean shutdown: everything synced)
	OpPartition                     // partition p1
	OpHeal                          // heal p1
	OpSlow                          // slow p1 200ms (extra one-way latency; 0s restores)
	OpLoseQoS2                      // lose-qos2 s1 (reboot losing incoming QoS2 state)
	OpAdvance                       // advance 500ms
	OpNode                          // node s1 v=4 expiry=10 rm=2 ... (declares a client, or configures the broker; see NodeConfig)
	OpReset                         // reset p1 [on=pubcomp] (the client's connection is reset now, or armed: as the next packet of that type is sent on it; as by the network's reset fault)
	OpHalfOpen                      // half-open p1 [told=client|broker] [on=pubcomp] (the client's connection goes silent now, or armed as reset's; as by the network's half-open fault)
)

// lastOpKind is the last op kind.
const lastOpKind = OpHalfOpen

var opNames = [...]string{
	OpConnect: "connect", OpSubscribe: "subscribe", OpUnsubscribe: "unsubscribe",
	OpPublish: "publish", OpDisconnect: "disconnect", OpCrash: "crash",
	OpRestart: "restart", OpStop: "stop", OpPartition: "partition", OpHeal: "heal",
	OpSlow: "slow", OpLoseQoS2: "lose-qos2", OpAdvance: "advance", OpNode: "node", OpReset: "reset", OpHalfOpen: "half-open",
}

// String returns the kind's text form.
func (k OpKind) String() string {
	if int(k) < len(opNames) && opNames[k] != "" {
		return opNames[k]
	}
	return "op(" + strconv.Itoa(int(k)) + ")"
}

// Op is one plan step.
//
// The small fields come first, side by side (80 bytes): a generated plan
// holds some 400 ops.
type Op struct {
	Kind   OpKind
	QoS    uint8   // publish QoS or requested subscription QoS
	Retain bool    // publish retain flag
	Clean  bool    // connect with Clean Start
	Flags  OpFlags // subscribe options, an empty publish, an abnormal disconnect
	RH     uint8   // subscribe: v5 Retain Handling 0, 1 or 2
	// Point, on a crash, arms the node to crash at its next crash point of
	// this kind in the safety phase (point=callback-pre), as a random crash
	// point would; 0 crashes it now, between steps.
	Point model.CrashPoint
	// Told, on a half-open, is the side told the connection closed: 1 the
	// client, 2 the broker, 0 neither (keep-alive finds it).
	Told uint8
	// Reason, on a disconnect, is the v5 DISCONNECT's reason code (0: 0x00
	// Normal disconnection; 0x04 or an error: the broker publishes the
	// will [MQTT-3.14.4-3]).
	Reason uint8
	// On, on a reset or half-open, arms the client's link to cut at the
	// next packet of this MQTT control packet type sent on its connection
	// (either way) in the safety phase, as the network's fault does on a
	// packet (on=pubcomp); 0 cuts it now. Skip lets that many packets of
	// the type pass first (skip=1: the second one is cut); on an armed
	// crash, that many crash points of its kind.
	On, Skip uint8
	Pad      uint16 // publish: bytes of padding after the message id in the payload
	Node     string // the node it acts on ("broker" or a client id); empty for advance
	Topic    string // publish topic, or subscribe/unsubscribe filter
	Msg      string // publish message id (the payload)
	// D is the advance duration, the slow extra latency, or a publish's v5
	// Message Expiry Interval (whole seconds; 0: none).
	D   engine.Duration
	Cfg *NodeConfig // node: what it declares
	// SubID is a subscribe's v5 Subscription Identifier (0: none).
	SubID uint32
	// Count, on a publish, makes it a burst: Count messages at once, named
	// Msg.1 .. Msg.Count (0: one message, named Msg). The exhaust
	// dimension's burst holds every packet id of its client.
	Count uint32
}

// MaxBurst bounds a publish's count=: twice the 65,535 packet ids, so a
// burst can hold them all and go on past them.
const MaxBurst = 2 * 65535

// OpFlags are an op's boolean options.
type OpFlags uint8

// Op flags, each with its text word.
const (
	FlagNoLocal  OpFlags = 1 << iota // subscribe: No Local (v5) [MQTT-3.8.3-3]
	FlagRAP                          // subscribe: Retain As Published (v5) [MQTT-3.8.3-4]
	FlagEmpty                        // publish: an empty payload (a retained message's clear) [MQTT-3.3.1-6]
	FlagAbnormal                     // disconnect: close without DISCONNECT (the will is published)
)

// flagWords are the text words of the flags and the op kind each belongs to.
var flagWords = [...]struct {
	f    OpFlags
	kind OpKind
	word string
}{{FlagNoLocal, OpSubscribe, "nolocal"}, {FlagRAP, OpSubscribe, "rap"}, {FlagEmpty, OpPublish, "empty"}, {FlagAbnormal, OpDisconnect, "abnormal"}}

// appendFlags appends the words of o's flags.
func (o Op) appendFlags(b []byte) []byte {
	for _, w := range flagWords {
		if o.Flags&w.f != 0 {
			b = append(b, ' ')
			b = append(b, w.word...)
		}
	}
	return b
}

// Header is what a plan file needs besides its ops to replay a run.
type Header struct {
	Format   int    // plan format version (PlanFormat)
	Seed     uint64 // the seed of every draw
	Profile  string
	Preset   string // engine preset name
	Scenario string
	Version  uint8 // MQTT protocol level: 4 or 5
	// CrashNode and CrashK select exhaustive crash mode: crash CrashNode at
	// its CrashK-th crash point (CrashK 0: random mode).
	CrashNode string
	CrashK    int
	// Faults is the run's custom profile (Config.Custom; its "faults" line),
	// nil when the run uses the profile named Profile.
	Faults *Profile
	// Policy is the preset's policies (its "policy" line) when they are not
	// those of the engine preset named Preset: a mutant, a custom mix, or a
	// name engine does not know. Nil when the name says it all.
	Policy *Policies
	// Workload is the swarm scenario's pinned dimensions (its "workload"
	// line, written for the swarm scenario or any pin).
	Workload Workload
}

// PlanFormat is the current plan file format: a plan of this format ends
// with an end line ("end ops=N crc32=XXXXXXXX") that proves it whole.
const PlanFormat = 2

// LegacyPlanFormat is the format of plans written before the end line:
// they still parse, without an end line, but nothing proves them whole.
const LegacyPlanFormat = 1

// Plan is a workload and its plan-level faults, as data.
type Plan struct {
	Header Header
	Ops    []Op
}

// String returns the text form of an op (one line, no newline).
func (o Op) String() string { return string(o.appendText(nil)) }

// appendText appends the op's text (String) to b.
func (o Op) appendText(b []byte) []byte {
	b = append(b, o.Kind.String()...)
	if o.Node != "" {
		b = append(b, ' ')
		b = append(b, o.Node...)
	}
	switch o.Kind {
	case OpConnect:
		if o.Clean {
			b = append(b, " clean"...)
		}
	case OpCrash:
		if o.Point != 0 {
			b = append(b, " point="...)
			b = append(b, crashPointName(o.Point)...)
		}
		if o.Skip != 0 {
			b = append(b, " skip="...)
			b = strconv.AppendInt(b, int64(o.Skip), 10)
		}
	case OpDisconnect:
		if o.Reason != 0 {
			b = append(b, " reason=0x"...)
			b = append(b, hexDigits[o.Reason>>4], hexDigits[o.Reason&15])
		}
	case OpHalfOpen, OpReset:
		if o.Told != 0 {
			b = append(b, " told="...)
			b = append(b, toldNames[o.Told]...)
		}
		if o.On != 0 {
			b = append(b, " on="...)
			b = append(b, packetTypeName(o.On)...)
		}
		if o.Skip != 0 {
			b = append(b, " skip="...)
			b = strconv.AppendInt(b, int64(o.Skip), 10)
		}
	case OpSubscribe:
		b = append(b, " filter="...)
		b = append(b, o.Topic...)
		b = append(b, " qos="...)
		b = strconv.AppendInt(b, int64(o.QoS), 10)
		if o.RH != 0 {
			b = append(b, " rh="...)
			b = strconv.AppendInt(b, int64(o.RH), 10)
		}
		if o.SubID != 0 {
			b = append(b, " subid="...)
			b = strconv.AppendUint(b, uint64(o.SubID), 10)
		}
	case OpUnsubscribe:
		b = append(b, " filter="...)
		b = append(b, o.Topic...)
	case OpPublish:
		b = append(b, " topic="...)
		b = append(b, o.Topic...)
		b = append(b, " qos="...)
		b = strconv.AppendInt(b, int64(o.QoS), 10)
		b = append(b, " msg="...)
		b = append(b, o.Msg...)
		if o.Retain {
			b = append(b, " retain"...)
		}
		if o.D != 0 {
			b = append(b, " expiry="...)
			b = append(b, FormatDuration(o.D)...)
		}
		if o.Pad != 0 {
			b = append(b, " pad="...)
			b = strconv.AppendInt(b, int64(o.Pad), 10)
		}
		if o.Count != 0 {
			b = append(b, " count="...)
			b = strconv.AppendUint(b, uint64(o.Count), 10)
		}
	case OpNode:
		b = o.Cfg.appendText(b)
	case OpSlow, OpAdvance:
		b = append(b, ' ')
		b = append(b, FormatDuration(o.D)...)
	}
	return o.appendFlags(b)
}

// String returns the plan file text: the header, a separator, one op a line.
// A header name left empty (profile, preset, scenario: the config's
// default) has no line.
func (p Plan) String() string {
	var b strings.Builder
	h := p.Header
	fmt.Fprintf(&b, "mqttlab-plan %d\nseed %d\n", h.Format, h.Seed)
	for _, l := range [...]struct{ key, val string }{{"profile", h.Profile}, {"preset", h.Preset}, {"scenario", h.Scenario}} {
		if l.val != "" {
			b.WriteString(l.key + " " + l.val + "\n")
		}
	}
	b.WriteString("version " + h.versionText() + "\n")
	if h.CrashK > 0 {
		fmt.Fprintf(&b, "crash-at %s %d\n", h.CrashNode, h.CrashK)
	}
	if h.Faults != nil {
		appendFaultsLine(&b, *h.Faults)
	}
	if h.Policy != nil {
		appendPolicyLine(&b, *h.Policy)
	}
	if h.Scenario == SwarmScenario || !h.Workload.IsZero() {
		b.WriteString("workload" + h.Workload.headerArgs() + "\n")
	}
	b.WriteString("---\n")
	for _, o := range p.Ops {
		b.WriteString(o.String())
		b.WriteByte('\n')
	}
	if h.Format >= PlanFormat {
		appendEndLine(&b, len(p.Ops), linesCRC(b.String()))
	}
	return b.String()
}

// MixedVersion is the version line's value for a swarm run whose clients
// each draw their protocol level: the run's own level (5) is no client's.
// It reads back as 5, so the run and its checksum are the same.
const MixedVersion = "mixed"

// versionText is the version line's value: the protocol level, or
// MixedVersion for a swarm run of level 5 that does not pin the version.
func (h Header) versionText() string {
	if _, pinned := h.Workload.PinnedVersion(); h.Scenario == SwarmScenario && h.Version == 5 && !pinned {
		return MixedVersion
	}
	return strconv.Itoa(int(h.Version))
}

// FormatDuration prints a duration in the largest unit that divides it
// exactly: 500ms, 2s, 1500us, 7ns, 0s.
func FormatDuration(d engine.Duration) string {
	units := []struct {
		n    engine.Duration
		name string
	}{{60 * engine.Second, "m"}, {engine.Second, "s"}, {engine.Millisecond, "ms"}, {1000, "us"}, {1, "ns"}}
	if d == 0 {
		return "0s"
	}
	for _, u := range units {
		if d%u.n == 0 {
			return strconv.FormatInt(d/u.n, 10) + u.name
		}
	}
	return strconv.FormatInt(d, 10) + "ns"
}

// ParseDuration reads what FormatDuration prints: a non-negative integer and
// one of the units ns, us, ms, s, m.
func ParseDuration(s string) (engine.Duration, error) {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i == 0 {
		return 0, fmt.Errorf("duration %q does not start with a number", s)
	}
	n, err := strconv.ParseInt(s[:i], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("duration %q: %v", s, err)
	}
	var unit engine.Duration
	switch s[i:] {
	case "ns":
		unit = 1
	case "us":
		unit = 1000
	case "ms":
		unit = engine.Millisecond
	case "s":
		unit = engine.Second
	case "m":
		unit = 60 * engine.Second
	default:
		return 0, fmt.Errorf("duration %q: unit %q is not one of ns, us, ms, s, m", s, s[i:])
	}
	if n > (1<<62)/unit {
		return 0, fmt.Errorf("duration %q is too long", s)
	}
	return n * unit, nil
}

// ParsePlan reads a plan file. Errors wrap ErrPlan and name the line. A
// plan of PlanFormat must end with its end line, whose op count and checksum
// must match the text before it (else the error wraps ErrPlanNotWhole); a
// LegacyPlanFormat plan may lack one.
func ParsePlan(text string) (Plan, error) {
	var p Plan
	lines := strings.Split(text, "\n")
	inOps := false
	var end *endLine
	for i, raw := range lines {
		line := strings.TrimSpace(raw)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		var err error
		switch {
		case end != nil:
			return Plan{}, fmt.Errorf("%w: line %d: text after the end line (line %d)", ErrPlanNotWhole, i+1, end.line)
		case isEndLine(line):
			if end, err = parseEndLine(line, i+1, lines[:i]); err != nil {
				return Plan{}, fmt.Errorf("%w: line %d: %v", ErrPlanNotWhole, i+1, err)
			}
		case line == "---":
			inOps = true
		case inOps:
			var op Op
			op, err = ParseOp(line)
			p.Ops = append(p.Ops, op)
		default:
			err = p.Header.parseLine(line)
		}
		if err != nil {
			return Plan{}, fmt.Errorf("%w: line %d: %v", ErrPlan, i+1, err)
		}
	}
	if !inOps {
		return Plan{}, fmt.Errorf("%w: no \"---\" line between the header and the ops (cut short?)", ErrPlanNotWhole)
	}
	if f := p.Header.Format; f != PlanFormat && f != LegacyPlanFormat {
		return Plan{}, fmt.Errorf("%w: format %d is not %d (or the legacy %d) (missing \"mqttlab-plan %d\" line?)", ErrPlan, f, PlanFormat, LegacyPlanFormat, PlanFormat)
	}
	return p, end.check(p)
}

func (h *Header) parseLine(line string) error {
	f := strings.Fields(line)
	var err error
	switch f[0] {
	case "faults":
		h.Faults, err = parseFaultsLine(f[1:])
		return err
	case "policy":
		h.Policy, err = parsePolicyLine(f[1:])
		return err
	case "workload":
		h.Workload, err = ParseWorkload(strings.Join(f[1:], " "))
		return err
	}
	want := 2
	if f[0] == "crash-at" {
		want = 3
	}
	if len(f) != want {
		return fmt.Errorf("header %q wants %d fields, has %d", f[0], want, len(f))
	}
	switch f[0] {
	case "mqttlab-plan":
		h.Format, err = strconv.Atoi(f[1])
	case "seed":
		h.Seed, err = strconv.ParseUint(f[1], 10, 64)
	case "profile":
		h.Profile = f[1]
	case "preset":
		h.Preset = f[1]
	case "scenario":
		h.Scenario = f[1]
	case "version":
		var v uint64 = 5
		if f[1] != MixedVersion {
			v, err = strconv.ParseUint(f[1], 10, 8)
		}
		h.Version = uint8(v)
	case "crash-at":
		h.CrashNode = f[1]
		h.CrashK, err = strconv.Atoi(f[2])
		if err == nil && h.CrashK < 1 {
			err = fmt.Errorf("crash-at point %d is not >= 1", h.CrashK)
		}
	default:
		return fmt.Errorf("unknown header %q (want mqttlab-plan, seed, profile, preset, scenario, version, crash-at, faults, policy, workload, or --- before the ops)", f[0])
	}
	if err != nil {
		return fmt.Errorf("header %s: %v", f[0], err)
	}
	return nil
}

// ParseOp reads one op in its text form.
func ParseOp(line string) (Op, error) {
	f := strings.Fields(line)
	if len(f) == 0 {
		return Op{}, errors.New("empty op")
	}
	kind := OpKind(0)
	for k, name := range opNames {
		if name == f[0] && name != "" {
			kind = OpKind(k)
		}
	}
	if kind == 0 {
		return Op{}, fmt.Errorf("unknown op %q", f[0])
	}
	op := Op{Kind: kind}
	args := f[1:]
	if kind == OpAdvance {
		if len(args) != 1 {
			return Op{}, fmt.Errorf("advance wants one duration, has %d arguments", len(args))
		}
		d, err := ParseDuration(args[0])
		op.D = d
		return op, err
	}
	if len(args) == 0 {
		return Op{}, fmt.Errorf("%s wants a node name", kind)
	}
	op.Node, args = args[0], args[1:]
	if strings.Contains(op.Node, "=") {
		return Op{}, fmt.Errorf("%s wants a node name first, not %q", kind, op.Node)
	}
	if err := op.parseArgs(args); err != nil {
		return Op{}, err
	}
	return op, op.validate()
}

func (o *Op) parseArgs(args []string) error {
	if o.Kind == OpNode {
		o.Cfg = &NodeConfig{}
	}
	for _, a := range args {
		key, val, hasVal := strings.Cut(a, "=")
		var err error
		if f := o.flagOf(a); f != 0 {
			o.Flags |= f
			continue
		}
		switch {
		case o.Kind == OpNode:
			err = o.Cfg.parseArg(a)
		case key == "point" && o.Kind == OpCrash:
			o.Point, err = parseCrashPoint(val)
		case key == "reason" && o.Kind == OpDisconnect:
			var n uint64
			n, err = strconv.ParseUint(val, 0, 8)
			o.Reason = uint8(n)
		case key == "told" && o.Kind == OpHalfOpen:
			o.Told, err = parseTold(val)
		case key == "on" && (o.Kind == OpHalfOpen || o.Kind == OpReset):
			o.On, err = parsePacketType(val)
		case key == "skip" && (o.Kind == OpHalfOpen || o.Kind == OpReset || o.Kind == OpCrash):
			var n uint64
			n, err = strconv.ParseUint(val, 10, 8)
			o.Skip = uint8(n)
		case key == "rh" && o.Kind == OpSubscribe:
			var n uint64
			n, err = strconv.ParseUint(val, 10, 8)
			if err == nil && n > 2 {
				err = fmt.Errorf("rh %d is not 0, 1 or 2", n)
			}
			o.RH = uint8(n)
		case key == "subid" && o.Kind == OpSubscribe:
			o.SubID, err = parseSubID(val)
		case key == "expiry" && o.Kind == OpPublish:
			o.D, err = ParseDuration(val)
			if err == nil && (o.D%engine.Second != 0 || o.D/engine.Second > 0xFFFFFFFF) {
				err = fmt.Errorf("expiry %s is not a whole number of seconds up to 4294967295", val)
			}
		case key == "pad" && o.Kind == OpPublish:
			var n uint64
			n, err = strconv.ParseUint(val, 10, 16)
			o.Pad = uint16(n)
		case key == "count" && o.Kind == OpPublish:
			var n uint64
			n, err = strconv.ParseUint(val, 10, 32)
			if err == nil && n > MaxBurst {
				err = fmt.Errorf("count %d is above %d", n, MaxBurst)
			}
			o.Count = uint32(n)
		case !hasVal && key == "clean" && o.Kind == OpConnect:
			o.Clean = true
		case !hasVal && key == "retain" && o.Kind == OpPublish:
			o.Retain = true
		case !hasVal && o.Kind == OpSlow:
			o.D, err = ParseDuration(key)
		case key == "topic" && o.Kind == OpPublish, key == "filter" && (o.Kind == OpSubscribe || o.Kind == OpUnsubscribe):
			o.Topic = val
		case key == "qos" && (o.Kind == OpPublish || o.Kind == OpSubscribe):
			var q uint64
			q, err = strconv.ParseUint(val, 10, 8)
			if err == nil && q > 2 {
				err = fmt.Errorf("qos %d is not 0, 1 or 2", q)
			}
			o.QoS = uint8(q)
		case key == "msg" && o.Kind == OpPublish:
			o.Msg = val
		default:
			return fmt.Errorf("%s does not take argument %q", o.Kind, a)
		}
		if err != nil {
			return fmt.Errorf("%s %s: %v", o.Kind, a, err)
		}
	}
	return nil
}

// parseSubID reads a Subscription Identifier: 1 to 268,435,455
// (§3.8.2.1.2).
func parseSubID(val string) (uint32, error) {
	n, err := strconv.ParseUint(val, 10, 32)
	if err != nil || n == 0 || n > 268435455 {
		return 0, fmt.Errorf("subid %q is not a number in 1..268435455", val)
	}
	return uint32(n), nil
}

// flagOf returns the flag word a names for o's kind, or 0.
func (o *Op) flagOf(a string) OpFlags {
	for _, w := range flagWords {
		if w.word == a && w.kind == o.Kind {
			return w.f
		}
	}
	return 0
}

// validate checks the arguments an op needs.
func (o *Op) validate() error {
	switch o.Kind {
	case OpSubscribe, OpUnsubscribe:
		if o.Topic == "" {
			return fmt.Errorf("%s needs filter=", o.Kind)
		}
	case OpPublish:
		if o.Topic == "" || o.Msg == "" {
			return fmt.Errorf("publish needs topic= and msg=")
		}
		if o.Flags&FlagEmpty != 0 && o.Pad != 0 {
			return fmt.Errorf("publish cannot be both empty and padded")
		}
		if o.Count != 0 && o.Flags&FlagEmpty != 0 {
			return fmt.Errorf("publish count= cannot be empty: each message is named by its payload")
		}
	case OpDisconnect:
		if o.Reason != 0 && (o.Flags&FlagAbnormal != 0 || !engine.ClientDisconnectReason(packet.ReasonCode(o.Reason))) {
			return fmt.Errorf("disconnect reason=0x%02x: not a reason a client sends (0x04, 0x80-0x83, 0x90, 0x93-0x99), nor one with abnormal", o.Reason)
		}
	case OpReset, OpHalfOpen:
		if o.Skip != 0 && o.On == 0 {
			return fmt.Errorf("%s: skip= needs on=", o.Kind)
		}
	case OpCrash:
		if o.Skip != 0 && o.Point == 0 {
			return errors.New("crash: skip= needs point=")
		}
	case OpNode:
		if o.Node == BrokerName && (o.Cfg.Version != 0 || o.Cfg.HasExpiry || o.Cfg.Clean || o.Cfg.KeepAlive != 0 || o.Cfg.Will != nil) {
			return fmt.Errorf("node broker takes only rm, window, maxsize, queue, queuefull, maxka, startid, shared, subids and aliases")
		}
		if o.Node != BrokerName && (o.Cfg.Queue != 0 || o.Cfg.QueueFull != 0 || o.Cfg.MaxKeepAlive != 0) {
			return fmt.Errorf("node %s: queue, queuefull and maxka are the broker's", o.Node)
		}
		if o.Node == BrokerName && o.Cfg.QueueFull != 0 && o.Cfg.Queue == 0 {
			return fmt.Errorf("node broker: queuefull needs queue=N")
		}
		if o.Node != BrokerName && (o.Cfg.Shared || o.Cfg.SubIDs) {
			return fmt.Errorf("node %s: shared and subids are the broker's", o.Node)
		}
	}
	return nil
}

// hexDigits are the digits of a reason code's text form.
const hexDigits = "0123456789abcdef"
