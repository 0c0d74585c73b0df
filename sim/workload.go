package sim

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrWorkload is wrapped by every workload parse error.
var ErrWorkload = errors.New("sim: bad workload")

// Workload pins dimensions of the swarm scenario's workload; a dimension
// not pinned is drawn from the seed. The zero value pins nothing. Its text
// form is "key=value,key=value" (the -workload flag) and, in a plan header,
// the "workload" line holding every key ("draw" for one not pinned).
type Workload struct {
	pins [numDims]pin
}

// pin is one dimension's pinned value.
type pin struct {
	set bool
	val int
}

// dim names a workload dimension.
type dim uint8

// The dimensions, in the order of the workload line.
const (
	dimPubs        dim = iota // publishers, 1..8
	dimSubs                   // subscribers, 1..8
	dimIdle                   // idle clients (persistent, one subscription, no traffic)
	dimMsgs                   // messages published
	dimVersion                // protocol level of every client (draw: per client)
	dimSession                // session kind of every client (draw: per client)
	dimWildcards              // + and # filters
	dimOverlap                // overlapping subscriptions of one client
	dimDowngrade              // subscription QoS below the publish QoS
	dimUnsub                  // unsubscribe and resubscribe mid-run
	dimSubOptions             // No Local, Retain As Published, Retain Handling
	dimRetained               // retained messages and late subscribers
	dimClear                  // retained messages cleared with an empty payload
	dimWills                  // will messages (with and without Will Delay)
	dimDisconnects            // normal and abnormal disconnects, outages
	dimMsgExpiry              // v5 Message Expiry
	dimWindows                // small Receive Maximum and inflight windows, both sides
	dimKeepAlive              // short keep-alives and idle gaps longer than them
	dimPayload                // payload sizes up to above the Maximum Packet Size
	dimWrap                   // packet ids that wrap from 65535 to 1
	dimShared                 // a group of v5 subscribers on $share/ filters
	dimSubIDs                 // v5 subscriptions with Subscription Identifiers
	dimExhaust                // a burst that holds all 65,535 packet ids of a client
	dimAliases                // the broker's outbound Topic Aliases
	dimDollar                 // $ topics beside the others
	dimBrokerMax              // the broker's Maximum Packet Size below some publishes
	dimQueue                  // the broker's per-session queue bound and its queue-full policy
	dimServerKA               // the broker's max_keepalive: v5 Server Keep Alive
	dimAccess                 // the broker's ACL and the clients' user names
	numDims
)

// dimSpec describes a dimension: its key, its values (names, or a numeric
// range when names is nil) and its doc.
type dimSpec struct {
	key    string
	names  []string
	lo, hi int
	doc    string
}

var onOff = []string{"off", "on"}

var dimSpecs = [numDims]dimSpec{
	dimPubs:        {key: "pubs", lo: 1, hi: 8, doc: "publishers p1..pN (draw: 1-8)"},
	dimSubs:        {key: "subs", lo: 1, hi: 8, doc: "subscribers s1..sN (draw: 1-8)"},
	dimIdle:        {key: "idle", lo: 0, hi: 100000, doc: "idle clients i1..iN, persistent, one subscription each (draw: 0, or 100-400 in one seed of 8)"},
	dimMsgs:        {key: "msgs", lo: 1, hi: 100000, doc: "messages published (draw: 20-150)"},
	dimVersion:     {key: "version", lo: 4, hi: 5, doc: "protocol level of every client (draw: per client)"},
	dimSession:     {key: "session", names: []string{"persistent", "clean", "expiry"}, doc: "session of every client: never expires, clean, or a v5 Session Expiry of 1-8 s (draw: per client; a publisher draws persistent or clean)"},
	dimWildcards:   {key: "wildcards", names: onOff, doc: "subscriptions with + and # filters"},
	dimOverlap:     {key: "overlap", names: onOff, doc: "overlapping subscriptions of one client"},
	dimDowngrade:   {key: "downgrade", names: onOff, doc: "subscription QoS drawn 0-2 (below and above the publish QoS); off: 2"},
	dimUnsub:       {key: "unsub", names: onOff, doc: "unsubscribe and resubscribe while messages are in flight"},
	dimSubOptions:  {key: "suboptions", names: onOff, doc: "v5 No Local (publishers subscribe too), Retain As Published, Retain Handling"},
	dimRetained:    {key: "retained", names: onOff, doc: "retained messages (set, replace) and subscribers arriving after them"},
	dimClear:       {key: "clear", names: onOff, doc: "retained messages cleared with an empty payload (QoS 1)"},
	dimWills:       {key: "wills", names: onOff, doc: "will messages, with and without v5 Will Delay"},
	dimDisconnects: {key: "disconnects", names: onOff, doc: "normal disconnects (v5: DISCONNECT 0x00, 0x04 or an error reason) and abnormal ones, outages longer than a Session Expiry"},
	dimMsgExpiry:   {key: "msgexpiry", names: onOff, doc: "v5 Message Expiry of 1-4 s on some messages"},
	dimWindows:     {key: "windows", names: onOff, doc: "Receive Maximum and inflight windows of 1-4 on the clients and the broker"},
	dimKeepAlive:   {key: "keepalive", names: onOff, doc: "keep-alives of 1-3 s and idle gaps of 2-8 s"},
	dimPayload:     {key: "payload", names: onOff, doc: "payloads padded to 0-4000 bytes, v5 subscribers with a Maximum Packet Size of 256-2048"},
	dimWrap:        {key: "wrap", names: []string{"off", "on", "long"}, doc: "on: every active client's and each new broker session's packet-id counter starts at 65528-65535, so ids wrap to 1 after a few packets (draw: one seed in 4); long: one publisher sends 65,600 QoS 1 messages instead (pinned only: seconds and hundreds of MB per seed)"},
	dimShared:      {key: "shared", names: onOff, doc: "2-3 persistent v5 members g1..gN of a shared subscription $share/g/F (sometimes a second group $share/h/u/a), leaving and ending their sessions with clean starts; the broker's shared subscriptions on (draw: one seed in 4)"},
	dimSubIDs:      {key: "subids", names: onOff, doc: "v5 subscriptions carry Subscription Identifiers (a new one on each resubscribe), with an extra overlapping filter; the broker's identifiers on (draw: one seed in 4)"},
	dimExhaust:     {key: "exhaust", names: onOff, doc: "packet-id exhaustion: a publisher, disconnected, publishes a burst of 65,536 QoS 1 messages to $x/<client>: 65,535 take every packet id, the last is refused; back, it sends them all (draw: one seed in " + strconv.Itoa(exhaustDen) + "; windows off in that seed)"},
	dimAliases:     {key: "aliases", names: onOff, doc: "the broker assigns 2-4 outbound Topic Aliases per connection, each v5 client announces a Topic Alias Maximum of 0-3 (draw: one seed in " + strconv.Itoa(moreDen) + ")"},
	dimDollar:      {key: "dollar", names: onOff, doc: "topics $d/a and $d/c/x beside the others, filters $d/#, $d/+ and +/c/x: first-level wildcards never match a $ topic (draw: one seed in " + strconv.Itoa(moreDen) + ")"},
	dimBrokerMax:   {key: "brokermax", names: onOff, doc: "the broker's Maximum Packet Size is 512-2048 bytes (node broker maxsize=N), below some padded publishes: v5 clients refuse those [MQTT-3.2.2-15]; 3.1.1 publishers, told no limit, pad below it (draw: one seed in " + strconv.Itoa(brokerMaxDen) + "; payload padding on in that seed unless pinned)"},
	dimQueue:       {key: "queue", names: []string{"off", "oldest", "newest"}, doc: "the broker's per-session queue bound (max_queued_messages) drawn 2-8, at which it drops the oldest queued copy or the arriving one (queue_full); the bound is declared to the model, which excuses only the drops it allows (draw: one seed in " + strconv.Itoa(optionsDen) + ", oldest or newest alike)"},
	dimServerKA:    {key: "serverka", names: onOff, doc: "the broker's max_keepalive drawn 1-10 s (1-2 s beside keepalive=on): a v5 client asking more is told it as Server Keep Alive and must use it; 3.1.1 clients ask at most it (draw: one seed in " + strconv.Itoa(optionsDen) + ")"},
	dimAccess:      {key: "access", names: onOff, doc: "the broker has an ACL (node broker acl=USER:ACCESS:FILTER,...) and each client logs in as itself (node C user=C): each may write some topics, read some filters; the broker refuses the rest (SUBACK 0x87/0x80, PUBACK/PUBREC 0x87, 3.1.1 publications acknowledged and dropped), which Access judges (draw: one seed in " + strconv.Itoa(accessDen) + ")"},
}

// WorkloadDim describes one workload dimension for usage texts.
type WorkloadDim struct {
	Key    string // the -workload key
	Values string // what it takes besides "draw": "off|on", "1..8", ...
	Doc    string
}

// WorkloadDims returns the workload's dimensions in the workload line's order.
func WorkloadDims() []WorkloadDim {
	out := make([]WorkloadDim, 0, numDims)
	for _, d := range dimSpecs {
		vals := strings.Join(d.names, "|")
		if d.names == nil {
			vals = strconv.Itoa(d.lo) + ".." + strconv.Itoa(d.hi)
		}
		out = append(out, WorkloadDim{Key: d.key, Values: vals, Doc: d.doc})
	}
	return out
}

// PinnedVersion returns the protocol level every client of the swarm
// scenario uses when w pins it (4: MQTT 3.1.1, 5), and false when each
// client draws its own.
func (w Workload) PinnedVersion() (uint8, bool) {
	p := w.pins[dimVersion]
	return uint8(p.val), p.set
}

// IsZero reports whether w pins nothing.
func (w Workload) IsZero() bool { return w == Workload{} }

// String returns the pinned dimensions as "key=value,key=value" (the
// -workload flag's form), "" when nothing is pinned.
func (w Workload) String() string {
	var parts []string
	for d := range numDims {
		if p := w.pins[d]; p.set {
			parts = append(parts, dimSpecs[d].key+"="+dimSpecs[d].format(p.val))
		}
	}
	return strings.Join(parts, ",")
}

// headerArgs returns the workload line's arguments: every key, "draw" for
// a dimension not pinned.
func (w Workload) headerArgs() string {
	var b strings.Builder
	for d := range numDims {
		b.WriteByte(' ')
		b.WriteString(dimSpecs[d].key)
		b.WriteByte('=')
		if p := w.pins[d]; p.set {
			b.WriteString(dimSpecs[d].format(p.val))
		} else {
			b.WriteString("draw")
		}
	}
	return b.String()
}

// format returns the text of value v.
func (d dimSpec) format(v int) string {
	if d.names != nil {
		return d.names[v]
	}
	return strconv.Itoa(v)
}

// parse reads a value's text.
func (d dimSpec) parse(s string) (int, error) {
	if d.names != nil {
		for i, n := range d.names {
			if n == s {
				return i, nil
			}
		}
		return 0, fmt.Errorf("%s=%q is not one of %s, draw", d.key, s, strings.Join(d.names, ", "))
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < d.lo || n > d.hi {
		return 0, fmt.Errorf("%s=%q is not a number in %d..%d, or draw", d.key, s, d.lo, d.hi)
	}
	return n, nil
}

// ParseWorkload reads "key=value,key=value" (spaces separate too): each key
// at most once; "draw" leaves a dimension to the seed. Errors wrap
// ErrWorkload and name the key.
func ParseWorkload(s string) (Workload, error) { return Workload{}.With(s) }

// With returns w with the pins of s (ParseWorkload's form) over it: a
// "key=draw" unpins that dimension.
func (w Workload) With(s string) (Workload, error) {
	seen := [numDims]bool{}
	for _, a := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' }) {
		key, val, ok := strings.Cut(a, "=")
		d := dimOf(key)
		switch {
		case !ok:
			return Workload{}, fmt.Errorf("%w: %q is not key=value", ErrWorkload, a)
		case d < 0:
			return Workload{}, fmt.Errorf("%w: unknown key %q (known: %s)", ErrWorkload, key, workloadKeyList())
		case seen[d]:
			return Workload{}, fmt.Errorf("%w: key %q given twice", ErrWorkload, key)
		}
		seen[d] = true
		if val == "draw" {
			w.pins[d] = pin{}
			continue
		}
		v, err := dimSpecs[d].parse(val)
		if err != nil {
			return Workload{}, fmt.Errorf("%w: %v", ErrWorkload, err)
		}
		w.pins[d] = pin{set: true, val: v}
	}
	return w, nil
}

func dimOf(key string) int {
	for d, s := range dimSpecs {
		if s.key == key {
			return d
		}
	}
	return -1
}

func workloadKeyList() string {
	keys := make([]string, 0, numDims)
	for _, s := range dimSpecs {
		keys = append(keys, s.key)
	}
	return strings.Join(keys, ", ")
}

// value returns dimension d's pinned value, or draw's when not pinned.
func (w Workload) value(d dim, draw func() int) int {
	if p := w.pins[d]; p.set {
		return p.val
	}
	return draw()
}

// on returns whether on/off dimension d is on: pinned, or drawn with
// chance num/den.
func (w Workload) on(d dim, r *Rand, num, den int) bool {
	return w.value(d, func() int { return b2i(r.Chance(num, den)) }) == 1
}

// b2i is 1 for true.
func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// DefaultWorkload is the campaign's swarm workload: every dimension drawn,
// none pinned (the zero Workload). Each dimension stayed pinned off until
// the model judged it right under the fixed engines (the commits and
// TestSwarmRegressionSeeds say what each took); with all of them drawn, simrun campaign -seeds 100000 fails no seed (commit 8db0089).
func DefaultWorkload() Workload {
	return Workload{}
}
