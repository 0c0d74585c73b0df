package findings

import (
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/mqttlab/mqttlab/model"
)

// Finding is one cause: the violations of one invariant by one subject
// whose reasons follow one pattern, and the violations they explain.
type Finding struct {
	Invariant model.Invariant
	// Subject is who broke the promise: "broker", or the clients' role
	// ("subscribers", "publishers", or "clients c*") with Nodes naming them.
	Subject string
	Nodes   []string
	// Pattern is the reasons' common text, message ids, packet ids, steps,
	// times and client numbers taken out.
	Pattern string
	// Occurrences are the violations of this cause, by step.
	Occurrences []model.Violation
	// First and Clearest index Occurrences: the earliest, and the one
	// whose flow excerpt is shortest (the earliest of those).
	First, Clearest int
	// Explains are the violations this cause explains, by step.
	Explains []Consequence
	// Version is the run's protocol level (V311 or V5); Clauses the
	// normative statements the occurrences cite, in its numbering.
	Version uint8
	Clauses []string
	// Excerpt is the flow of the clearest occurrence: indexes into the
	// history's events, ascending (see flow); Refused counts the events of
	// connection attempts that got no CONNACK it leaves out.
	Excerpt []int
	Refused int
	// Reading is a paragraph in plain words.
	Reading string
}

// Consequence is a violation a finding's cause explains, and the rule by
// which it does (an index into Rules).
type Consequence struct {
	Violation model.Violation
	Rule      int
}

// Count is how many violations the finding's cause is.
func (f *Finding) Count() int { return len(f.Occurrences) }

// Total is how many violations the finding accounts for: its own and
// those it explains.
func (f *Finding) Total() int { return len(f.Occurrences) + len(f.Explains) }

// ExplainedCounts counts the explained violations per invariant, in the
// model's invariant order.
func (f *Finding) ExplainedCounts() []InvariantCount {
	n := map[model.Invariant]int{}
	for _, c := range f.Explains {
		n[c.Violation.Invariant]++
	}
	var out []InvariantCount
	for _, inv := range model.Invariants() {
		if n[inv] > 0 {
			out = append(out, InvariantCount{inv, n[inv]})
		}
	}
	return out
}

// InvariantCount is a number of violations of one invariant.
type InvariantCount struct {
	Invariant model.Invariant
	N         int
}

// clearestOf bounds how many occurrences of a finding are read for the
// clearest one.
const clearestOf = 64

// Group groups the violations vs of history h into findings, ordered by
// their first occurrence. Every violation is in exactly one finding, as an
// occurrence or as a consequence. The run's protocol version is the one
// most of h's Connected events show (5.0 when none does).
func Group(h *model.History, vs []model.Violation) []Finding {
	if len(vs) == 0 {
		return nil
	}
	g := newGrouper(h, vs)
	g.link()
	return g.findings()
}

// grouper is Group's state.
type grouper struct {
	h       *model.History
	vs      []model.Violation
	msgs    [][]string       // per violation: the messages it concerns
	clients [][]string       // per violation: the clients it concerns
	parent  []int            // per violation: its cause, or -1
	rule    []int            // per violation with a cause: the rule
	version uint8            // the run's
	nodeVer map[string]uint8 // each client's, from its last Connected
	ix      *flowIndex       // built on first use
	cut     boundCut         // set by link
}

func newGrouper(h *model.History, vs []model.Violation) *grouper {
	sorted := slices.Clone(vs)
	slices.SortStableFunc(sorted, func(a, b model.Violation) int { return a.Step - b.Step })
	g := &grouper{h: h, vs: sorted, msgs: make([][]string, len(vs)), clients: make([][]string, len(vs)),
		parent: make([]int, len(vs)), rule: make([]int, len(vs)), version: RunVersion(h), nodeVer: map[string]uint8{}}
	for i := range h.Events {
		if e := &h.Events[i]; e.Kind == model.Connected && e.Version != 0 {
			g.nodeVer[e.Node] = e.Version
		}
	}
	for i := range g.vs {
		g.msgs[i] = violationMsgs(h, &g.vs[i])
		g.clients[i] = violationClients(h, &g.vs[i])
		g.parent[i], g.rule[i] = -1, -1
	}
	return g
}

// versionOf is the protocol version violation i was judged in: its
// node's, else that of the clients it concerns when they agree, else the
// run's.
func (g *grouper) versionOf(i int) uint8 {
	if nv := g.nodeVer[g.vs[i].Node]; nv != 0 { // the subject's own
		return nv
	}
	v := uint8(0)
	for _, c := range g.clients[i] {
		switch cv := g.nodeVer[c]; {
		case cv == 0:
		case v == 0:
			v = cv
		case v != cv:
			return g.version
		}
	}
	if v == 0 {
		return g.version
	}
	return v
}

// RunVersion is the protocol level most Connected events of h show: V311
// or V5 (V5 when none shows one).
func RunVersion(h *model.History) uint8 {
	n := map[uint8]int{}
	for i := range h.Events {
		if e := &h.Events[i]; e.Kind == model.Connected && e.Version != 0 {
			n[e.Version]++
		}
	}
	if n[V311] > n[V5] {
		return V311
	}
	return V5
}

// msgQuoteRE finds a message a reason names: msg "x".
var msgQuoteRE = regexp.MustCompile(`msg "([^"]+)"`)

// violationMsgs lists the messages a violation concerns: those of the
// events it cites, then those its reason names.
func violationMsgs(h *model.History, v *model.Violation) []string {
	var out []string
	add := func(m string) {
		if m != "" && !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	for _, i := range v.Events {
		if i >= 0 && i < len(h.Events) {
			add(h.Events[i].Msg)
			add(h.Events[i].Packet.Msg)
		}
	}
	for _, m := range msgQuoteRE.FindAllStringSubmatch(v.Reason, -1) {
		add(m[1])
	}
	return out
}

// violationClients lists the clients a violation concerns: its node and
// the nodes and peers of the events it cites, the broker left out.
func violationClients(h *model.History, v *model.Violation) []string {
	var out []string
	add := func(n string) {
		if n != "" && n != model.BrokerNode && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	add(v.Node)
	for _, i := range v.Events {
		if i >= 0 && i < len(h.Events) {
			add(h.Events[i].Node)
			add(h.Events[i].Peer)
		}
	}
	return out
}

// link gives each violation its cause by the first rule that fits: the
// earliest violation of the rule's cause invariant that shares the rule's
// scope with it and comes before it (anywhere, for end-of-run invariants).
func (g *grouper) link() {
	first := g.causeIndex()
	cut := g.cutAtBound()
	g.cut = cut
	for i := range g.vs {
		v := &g.vs[i]
		if cut.stuck >= 0 && v.Invariant == model.NoStuck {
			continue // the cut itself: a root
		}
		for ri, r := range Rules {
			if ri == CutRule || !slices.Contains(r.Effects, v.Invariant) {
				continue
			}
			c := g.earliestCause(first[ri], r.Scope, i)
			if c >= 0 && (g.vs[c].Step <= v.Step || endOfRun.Has(v.Invariant)) {
				g.parent[i], g.rule[i] = c, ri
				break
			}
		}
		if g.parent[i] < 0 && cut.stuck >= 0 && cut.unsettled(g, i) {
			g.parent[i], g.rule[i] = cut.stuck, CutRule // a subject's cause first, the cut else
		}
	}
}

// causeIndex maps, per rule, each scope key (client, or client and
// message) to the earliest violation of the rule's cause with that key;
// key "" holds the earliest of all.
func (g *grouper) causeIndex() []map[string]int {
	out := make([]map[string]int, len(Rules))
	for ri, r := range Rules {
		m := map[string]int{}
		for i := range g.vs {
			if g.vs[i].Invariant != r.Cause {
				continue
			}
			for _, k := range append(g.keys(i, r.Scope), "") {
				if _, ok := m[k]; !ok {
					m[k] = i // g.vs is by step: the first is the earliest
				}
			}
		}
		out[ri] = m
	}
	return out
}

// keys are violation i's scope keys.
func (g *grouper) keys(i int, s Scope) []string {
	var out []string
	for _, c := range g.clients[i] {
		if s == SameClient {
			out = append(out, c)
			continue
		}
		for _, m := range g.msgs[i] {
			out = append(out, c+"\x00"+m)
		}
	}
	return out
}

// earliestCause is the earliest cause in idx sharing a scope key with
// violation i, or -1; a violation naming no client (a NoStuck of the whole
// run) shares the client scope with any.
func (g *grouper) earliestCause(idx map[string]int, s Scope, i int) int {
	best := -1
	keys := g.keys(i, s)
	if s == SameClient && len(g.clients[i]) == 0 {
		keys = []string{""}
	}
	for _, k := range keys {
		if c, ok := idx[k]; ok && c != i && (best < 0 || c < best) {
			best = c
		}
	}
	return best
}

// root follows i's causes to the first violation that has none.
func (g *grouper) root(i int) int {
	for n := 0; g.parent[i] >= 0 && n < len(g.vs); n++ {
		i = g.parent[i]
	}
	return i
}

// findings builds the findings from the roots.
func (g *grouper) findings() []Finding {
	byKey := map[string]int{}
	var out []Finding
	of := make([]int, len(g.vs)) // violation -> its finding, for roots
	for i := range g.vs {
		if g.root(i) != i {
			continue
		}
		v := &g.vs[i]
		subject, nodes := subjectOf(v.Node)
		pattern := Pattern(v.Reason)
		if i == g.cut.stuck {
			subject, nodes, pattern = CutSubject, nil, "the run was cut at its liveness bound while still delivering"
		}
		if sh := g.shape(v); sh != "" {
			pattern += " [" + sh + "]"
		}
		key := v.Invariant.String() + "\x00" + subject + "\x00" + pattern
		fi, ok := byKey[key]
		if !ok {
			fi = len(out)
			byKey[key] = fi
			out = append(out, Finding{Invariant: v.Invariant, Subject: subject, Pattern: pattern, Version: g.versionOf(i)})
		}
		f := &out[fi]
		for _, n := range nodes {
			if !slices.Contains(f.Nodes, n) {
				f.Nodes = append(f.Nodes, n)
			}
		}
		f.Occurrences = append(f.Occurrences, *v)
		of[i] = fi
	}
	for i := range g.vs {
		if r := g.root(i); r != i {
			rule := g.rule[i]
			out[of[r]].Explains = append(out[of[r]].Explains, Consequence{Violation: g.vs[i], Rule: rule})
		}
	}
	for fi := range out {
		g.complete(&out[fi])
	}
	return out
}

// complete fills a finding's clearest occurrence, excerpt, clauses and
// reading.
func (g *grouper) complete(f *Finding) {
	sort.Strings(f.Nodes)
	best := -1
	for i := range f.Occurrences {
		if i == clearestOf {
			break
		}
		ex := g.flow(&f.Occurrences[i])
		if best < 0 || len(ex.events) < len(f.Excerpt) {
			best, f.Excerpt, f.Refused = i, ex.events, ex.refused
		}
	}
	f.Clearest = best
	for _, v := range f.Occurrences {
		for _, c := range Clauses(v.Reason+" "+defaultClauses(f), f.Version) {
			if !slices.Contains(f.Clauses, c) {
				f.Clauses = append(f.Clauses, c)
			}
		}
	}
	f.Reading = reading(f, g.h, g.cut)
}

// CutSubject is the subject of the finding of a run cut at its liveness
// bound while still delivering: the tester's bound, not a subject.
const CutSubject = "liveness bound"

// subjectOf names who a violation's node is: the broker, or a client's
// role from its id's letters (s1 -> subscribers).
func subjectOf(node string) (string, []string) {
	if node == "" || node == model.BrokerNode {
		return model.BrokerNode, nil
	}
	switch strings.TrimRight(node, "0123456789") {
	case "s":
		return "subscribers", []string{node}
	case "p":
		return "publishers", []string{node}
	}
	return "clients " + strings.TrimRight(node, "0123456789") + "*", []string{node}
}

// pattern rewrites: quoted text, message ids, numbered things and client
// ids lose what varies between occurrences of one cause.
var patternRules = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`"[^"]*"`), `"…"`},
	{regexp.MustCompile(`\blt[0-9a-f]{6}-[0-9]+\b`), `…`},
	{regexp.MustCompile(`\b(step|steps|id|ids|at|first at|after) [0-9]+\b`), `$1 N`},
	{regexp.MustCompile(`\b[0-9]+(\.[0-9]+)?(ns|µs|us|ms|s|m|h)\b`), `T`},
	{regexp.MustCompile(`\b([a-z])[0-9]+\b`), `$1*`},
	{regexp.MustCompile(`\b[0-9]{2,}\b`), `N`},
}

// Pattern is a reason with what varies between occurrences of one cause
// taken out: quoted text, message ids, steps, packet ids, times, client
// numbers and numbers of two digits or more.
func Pattern(reason string) string {
	var b strings.Builder
	last := 0
	for _, m := range idRE.FindAllStringIndex(reason, -1) { // spec ids stay whole
		b.WriteString(patternOf(reason[last:m[0]]))
		b.WriteString(reason[m[0]:m[1]])
		last = m[1]
	}
	b.WriteString(patternOf(reason[last:]))
	return b.String()
}

func patternOf(s string) string {
	for _, r := range patternRules {
		s = r.re.ReplaceAllString(s, r.with)
	}
	return s
}
