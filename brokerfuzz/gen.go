package brokerfuzz

import (
	"fmt"
	"math/rand/v2"
)

// Generate returns the case of seed: one to three connections, each a valid
// session (CONNECT, then PUBLISH, SUBSCRIBE, UNSUBSCRIBE, PINGREQ, PUBREL,
// DISCONNECT) interleaved, with (most of the time) one packet mutated: a
// field set to a value some rule forbids, or its bytes flipped, cut or
// grown. The same seed gives the same case.
func Generate(seed uint64) Case {
	g := &gen{r: rand.New(rand.NewPCG(seed, 0x6d71747466757a7a)), seed: seed}
	return g.generate()
}

// gen is one case's generator state.
type gen struct {
	r     *rand.Rand
	seed  uint64
	conns []genConn
	steps []Step
}

// genConn is a generated connection: its version and next packet id.
type genConn struct {
	v      byte
	nextID uint16
}

func (g *gen) generate() Case {
	n := 1 + g.r.IntN(3)
	for i := range n {
		v := byte(4)
		if g.r.IntN(2) == 0 {
			v = 5
		}
		g.conns = append(g.conns, genConn{v: v, nextID: uint16(1 + g.r.IntN(200))})
		g.add(i, g.connect(i, 0x02), "CONNECT")
	}
	for range 2 + g.r.IntN(7) {
		c := g.r.IntN(n)
		data, note := g.op(c)
		g.add(c, data, note)
	}
	if g.r.IntN(8) == 0 {
		c := g.r.IntN(n)
		g.add(c, rawDisconnect(g.conns[c].v, 0), "DISCONNECT")
	}
	if g.r.IntN(100) < 85 {
		g.mutate()
	}
	return Case{Seed: g.seed, Steps: g.steps}
}

// add appends a step on connection c (0-based here, 1-based in the case).
func (g *gen) add(c int, data []byte, note string) {
	g.steps = append(g.steps, Step{Conn: c + 1, Version: g.conns[c].v, Data: data, Note: note})
}

// id hands out connection c's next packet id (never 0 by itself).
func (g *gen) id(c int) uint16 {
	id := g.conns[c].nextID
	g.conns[c].nextID++
	if g.conns[c].nextID == 0 {
		g.conns[c].nextID = 1
	}
	return id
}

// marker is the payload that names a PUBLISH of this case: a subscriber that
// receives it proves the broker forwarded that packet.
func (g *gen) marker() string {
	return fmt.Sprintf("%s%x-%d", markerPrefix, g.seed, len(g.steps))
}

var (
	topics  = []string{"fz/a", "fz/b/c", "fz/d"}
	filters = []string{"fz/#", "fz/+/c", "fz/a", "#"}
)

// connect is a valid CONNECT for connection c with the given flags.
func (g *gen) connect(c int, flags byte) []byte {
	return rawConnect(connectFields{protoName: "MQTT", level: g.conns[c].v, flags: flags, keepAlive: 60,
		clientID: fmt.Sprintf("fz%x-%d", g.seed&0xffffff, c+1)})
}

// op is a valid packet for connection c and its note.
func (g *gen) op(c int) ([]byte, string) {
	v := g.conns[c].v
	switch k := g.r.IntN(10); {
	case k < 5:
		qos := byte(g.r.IntN(3))
		topic := topics[g.r.IntN(len(topics))]
		var id uint16
		if qos > 0 {
			id = g.id(c)
		}
		return rawPublish(v, qos<<1, topic, id, nil, g.marker()), fmt.Sprintf("PUBLISH q%d id %d %q", qos, id, topic)
	case k < 7:
		f := filters[g.r.IntN(len(filters))]
		id := g.id(c)
		return rawSubscribe(v, 0x82, id, nil, []string{f}, []byte{byte(g.r.IntN(3))}), fmt.Sprintf("SUBSCRIBE id %d %q", id, f)
	case k < 8:
		f := filters[g.r.IntN(len(filters))]
		id := g.id(c)
		return rawUnsubscribe(v, 0xa2, id, []string{f}), fmt.Sprintf("UNSUBSCRIBE id %d %q", id, f)
	case k < 9:
		return []byte{0xc0, 0}, "PINGREQ"
	default:
		id := g.id(c)
		return rawAck(0x62, id), fmt.Sprintf("PUBREL id %d (unknown)", id)
	}
}

// mutate replaces (or, for the ordering mutations, inserts) one step with a
// packet that breaks a rule, or damages one step's bytes.
func (g *gen) mutate() {
	i := g.r.IntN(len(g.steps))
	st := &g.steps[i]
	c := st.Conn - 1
	if g.r.IntN(10) < 3 {
		st.Data, st.Note = g.damage(st.Data), st.Note+" [bytes damaged]"
		return
	}
	m := mutations[g.r.IntN(len(mutations))]
	if m.v != 0 && m.v != g.conns[c].v {
		m = mutations[0]
	}
	data := m.make(g, c)
	note := "mutated: " + m.name
	ins := Step{Conn: st.Conn, Version: st.Version, Data: data, Note: note}
	switch m.name {
	case "before-connect": // the connection's first packet
		g.insert(g.firstOf(st.Conn), ins)
	case "second-connect": // after the connection's own CONNECT
		g.insert(max(i, g.firstOf(st.Conn))+1, ins)
	default:
		st.Data, st.Note = data, note
	}
}

// firstOf is the index of connection conn's first step.
func (g *gen) firstOf(conn int) int {
	for j, s := range g.steps {
		if s.Conn == conn {
			return j
		}
	}
	return 0
}

// insert puts s at index i of the steps.
func (g *gen) insert(i int, s Step) {
	g.steps = append(g.steps[:i:i], append([]Step{s}, g.steps[i:]...)...)
}

// damage flips, inserts, deletes or cuts bytes of data.
func (g *gen) damage(data []byte) []byte {
	d := append([]byte(nil), data...)
	if len(d) == 0 {
		return []byte{byte(g.r.IntN(256))}
	}
	p := g.r.IntN(len(d))
	switch g.r.IntN(4) {
	case 0:
		d[p] ^= 1 << g.r.IntN(8)
	case 1:
		d = append(d[:p:p], append([]byte{byte(g.r.IntN(256))}, d[p:]...)...)
	case 2:
		d = append(d[:p:p], d[p+1:]...)
	default:
		d = d[:p]
	}
	return d
}

// mutation is a packet that breaks a rule; v limits it to one version.
type mutation struct {
	name string
	v    byte
	make func(g *gen, c int) []byte
}

// pub is a PUBLISH of connection c with flags, topic and v5 properties.
func (g *gen) pub(c int, flags byte, topic string, prop []byte) []byte {
	var id uint16
	if flags&0x06 != 0 {
		id = g.id(c)
	}
	return rawPublish(g.conns[c].v, flags, topic, id, prop, g.marker())
}

// sub is a SUBSCRIBE of connection c.
func (g *gen) sub(c int, first byte, prop []byte, fs []string, opts []byte) []byte {
	return rawSubscribe(g.conns[c].v, first, g.id(c), prop, fs, opts)
}

// connWith is a CONNECT of connection c with fields changed by f.
func (g *gen) connWith(c int, f func(*connectFields)) []byte {
	cf := connectFields{protoName: "MQTT", level: g.conns[c].v, flags: 0x02, keepAlive: 60, clientID: fmt.Sprintf("fz%x-%d", g.seed&0xffffff, c+1)}
	f(&cf)
	return rawConnect(cf)
}

var mutations = []mutation{
	{"wildcard-topic", 0, func(g *gen, c int) []byte { return g.pub(c, 0x02, []string{"fz/#", "fz/+/c", "#"}[g.r.IntN(3)], nil) }},
	{"qos3", 0, func(g *gen, c int) []byte { return g.pub(c, 0x06, "fz/a", nil) }},
	{"id0", 0, func(g *gen, c int) []byte {
		return rawPublish(g.conns[c].v, 0x02, "fz/a", 0, nil, g.marker())
	}},
	{"dup-qos0", 0, func(g *gen, c int) []byte { return g.pub(c, 0x08, "fz/a", nil) }},
	{"bad-utf8-topic", 0, func(g *gen, c int) []byte { return g.pub(c, 0x02, "fz/\xff\xfe", nil) }},
	{"nul-topic", 0, func(g *gen, c int) []byte { return g.pub(c, 0x02, "fz/\x00a", nil) }},
	{"surrogate-topic", 0, func(g *gen, c int) []byte { return g.pub(c, 0x02, "fz/\xed\xa0\x80", nil) }},
	{"empty-topic", 0, func(g *gen, c int) []byte { return g.pub(c, 0x02, "", nil) }},
	{"alias-0", 5, func(g *gen, c int) []byte { return g.pub(c, 0x02, "fz/a", []byte{0x23, 0, 0}) }},
	{"unknown-property", 5, func(g *gen, c int) []byte { return g.pub(c, 0x02, "fz/a", []byte{0x7f, 1}) }},
	{"duplicate-property", 5, func(g *gen, c int) []byte { return g.pub(c, 0x02, "fz/a", []byte{0x01, 0, 0x01, 0}) }},
	{"subscription-id-in-publish", 5, func(g *gen, c int) []byte { return g.pub(c, 0x02, "fz/a", []byte{0x0b, 1}) }},
	{"property-length-overrun", 5, func(g *gen, c int) []byte {
		b := g.pub(c, 0x02, "fz/a", nil)
		for i := len(b) - 1; i >= 0; i-- { // the empty property block is the last 0 before the marker
			if b[i] == 0 && i+1 < len(b) && b[i+1] == markerPrefix[0] {
				b[i] = 0x7f
				break
			}
		}
		return b
	}},
	{"subscribe-flags", 0, func(g *gen, c int) []byte { return g.sub(c, 0x80, nil, []string{"fz/#"}, []byte{1}) }},
	{"subscribe-empty", 0, func(g *gen, c int) []byte { return g.sub(c, 0x82, nil, nil, nil) }},
	{"subscribe-qos3", 0, func(g *gen, c int) []byte { return g.sub(c, 0x82, nil, []string{"fz/#"}, []byte{3}) }},
	{"subscribe-reserved-bits", 0, func(g *gen, c int) []byte { return g.sub(c, 0x82, nil, []string{"fz/#"}, []byte{0xc1}) }},
	{"subscribe-bad-filter", 0, func(g *gen, c int) []byte {
		return g.sub(c, 0x82, nil, []string{[]string{"fz/#/a", "fz/a+", "fz/#a", ""}[g.r.IntN(4)]}, []byte{1})
	}},
	{"subscribe-id0", 0, func(g *gen, c int) []byte {
		return rawSubscribe(g.conns[c].v, 0x82, 0, nil, []string{"fz/#"}, []byte{1})
	}},
	{"shared-no-local", 5, func(g *gen, c int) []byte { return g.sub(c, 0x82, nil, []string{"$share/g/fz/#"}, []byte{0x05}) }},
	{"unsubscribe-flags", 0, func(g *gen, c int) []byte { return rawUnsubscribe(g.conns[c].v, 0xa0, g.id(c), []string{"fz/#"}) }},
	{"unsubscribe-empty", 0, func(g *gen, c int) []byte { return rawUnsubscribe(g.conns[c].v, 0xa2, g.id(c), nil) }},
	{"protocol-name", 0, func(g *gen, c int) []byte { return g.connWith(c, func(f *connectFields) { f.protoName = "MQTX" }) }},
	// Levels no standard defines; not 0x83/0x84, the bridge levels (a
	// version with the 0x80 bit) that mosquitto documents as its own
	// extension for bridges.
	{"protocol-level", 0, func(g *gen, c int) []byte {
		return g.connWith(c, func(f *connectFields) { f.level = []byte{0, 2, 6, 7}[g.r.IntN(4)] })
	}},
	{"connect-reserved-flag", 0, func(g *gen, c int) []byte { return g.connWith(c, func(f *connectFields) { f.flags |= 0x01 }) }},
	{"will-qos3", 0, func(g *gen, c int) []byte {
		return g.connWith(c, func(f *connectFields) { f.flags = 0x1e; f.willTopic, f.willMsg = "fz/will", g.marker() })
	}},
	{"will-qos-without-will", 0, func(g *gen, c int) []byte { return g.connWith(c, func(f *connectFields) { f.flags = 0x0a }) }},
	{"will-retain-without-will", 0, func(g *gen, c int) []byte { return g.connWith(c, func(f *connectFields) { f.flags = 0x22 }) }},
	{"will-topic-wildcard", 0, func(g *gen, c int) []byte {
		return g.connWith(c, func(f *connectFields) { f.flags = 0x06; f.willTopic, f.willMsg = "fz/#", g.marker() })
	}},
	{"password-without-user", 4, func(g *gen, c int) []byte {
		return g.connWith(c, func(f *connectFields) { f.flags = 0x42; f.pass = "x" })
	}},
	{"second-connect", 0, func(g *gen, c int) []byte { return g.connect(c, 0x02) }},
	{"before-connect", 0, func(g *gen, c int) []byte { return g.pub(c, 0x02, "fz/a", nil) }},
	{"pubrel-flags", 0, func(g *gen, c int) []byte { return rawAck(0x60, g.id(c)) }},
	{"pingreq-body", 0, func(g *gen, c int) []byte { return []byte{0xc0, 1, 0} }},
	{"reserved-type-0", 0, func(g *gen, c int) []byte { return []byte{0x00, 0} }},
	{"reserved-type-15", 4, func(g *gen, c int) []byte { return []byte{0xf0, 0} }},
	{"disconnect-flags", 0, func(g *gen, c int) []byte { return []byte{0xe2, 0} }},
	{"remaining-length-5-bytes", 0, func(g *gen, c int) []byte { return []byte{0xc0, 0x80, 0x80, 0x80, 0x80, 0x01} }},
	{"remaining-length-overlong", 0, func(g *gen, c int) []byte { return []byte{0xc0, 0x80, 0x00} }},
	{"server-packet-connack", 0, func(g *gen, c int) []byte { return []byte{0x20, 2, 0, 0} }},
	{"server-packet-suback", 0, func(g *gen, c int) []byte { return []byte{0x90, 3, 0, 1, 0} }},
}
