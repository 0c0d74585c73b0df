package sim

import (
	"crypto/sha512"
	"fmt"
	"strings"

	"github.com/mqttlab/mqttlab/engine"
	"github.com/mqttlab/mqttlab/model"
)

// The swarm's access dimension: the broker's access control
// (BrokerConfig.Access, "node broker acl=USER:ACCESS:FILTER,..."). Drawn on
// (one seed in accessDen, from its own stream planGen.accR: a seed that
// draws it off keeps its plan), every active client (publishers,
// subscribers, shared-group members) logs in as itself ("node C user=C",
// its name as password; the idle clients connect anonymously, and the
// anonymous section has no rule) and the ACL gives each user, per topic
// the swarm publishes to, write with chance 3/4 and read with chance 2/3,
// and read on each wildcard filter of the swarm whose first level is not a
// wildcard with chance 1/2; everyone may use the $x/ topics of the exhaust
// dimension. So the broker refuses some subscriptions (SUBACK 0x87 in v5,
// 0x80 in 3.1.1), refuses some v5 publications (PUBACK/PUBREC 0x87) and
// acknowledges and drops some 3.1.1 ones [MQTT-3.3.5-2]; Access judges all
// of it, and refused publications are owed to no one (model refused.go).
//
// The rules only grant (no deny line), each on a filter whose first level
// is literal: a subscription a rule covers then matches only topics the
// rule lets the client read, so the broker's check of each delivery never
// withholds a copy of a granted subscription, which NoLoss would owe.

// accessDen: one seed in accessDen draws the access dimension on.
const accessDen = 16

// drawACL draws the ACL of the clients all (and sets their user names),
// from the access stream: a rule list that grows with the active clients
// only (idle=100000 adds no rule).
func (s *swarmGen) drawACL(all []*swarmClient) string {
	r := s.accR
	var rules []string
	for _, c := range all {
		if c.cfg == nil {
			c.cfg = &NodeConfig{}
		}
		c.cfg.User = c.name
		for _, t := range s.topics {
			w, rd := r.Chance(3, 4), r.Chance(2, 3)
			switch {
			case w && rd:
				rules = append(rules, c.name+":readwrite:"+t)
			case w:
				rules = append(rules, c.name+":write:"+t)
			case rd:
				rules = append(rules, c.name+":read:"+t)
			}
		}
		for _, f := range s.wildcardList {
			if f[0] != '+' && f[0] != '#' && r.Chance(1, 2) {
				rules = append(rules, c.name+":read:"+f)
			}
		}
		rules = append(rules, c.name+":readwrite:$x/#")
	}
	return strings.Join(rules, ",")
}

// parseACL reads a node op's acl= value into topic rules.
func parseACL(s string) ([]engine.ACLRule, error) {
	var out []engine.ACLRule
	for _, f := range strings.Split(s, ",") {
		parts := strings.SplitN(f, ":", 3)
		if len(parts) != 3 || parts[2] == "" {
			return nil, fmt.Errorf("node acl: %q is not USER:ACCESS:FILTER", f)
		}
		r := engine.ACLRule{User: parts[0], Topic: parts[2]}
		switch parts[1] {
		case "read":
			r.Access = engine.ACLRead
		case "write":
			r.Access = engine.ACLWrite
		case "readwrite":
			r.Access = engine.ACLReadWrite
		case "deny":
			r.Access = engine.ACLDeny
		default:
			return nil, fmt.Errorf("node acl: %q: access %q is not read, write, readwrite or deny", f, parts[1])
		}
		out = append(out, r)
	}
	return out, nil
}

// aclSalt is the salt of the sim's password hashes.
var aclSalt = []byte("mqttlab")

// brokerAccess builds the broker's Access of an acl= value: its rules, a
// user table of every user they name (password: the user name; a `$6$`
// hash, salted SHA-512), anonymous clients let in.
func brokerAccess(s string) *engine.Access {
	rules, err := parseACL(s)
	if err != nil {
		return nil // the op's parse refused it already
	}
	a := &engine.Access{Anonymous: true, ACL: true, Rules: rules, Users: map[string]engine.PasswordHash{}}
	for _, r := range rules {
		if _, ok := a.Users[r.User]; r.User == "" || ok {
			continue
		}
		d := sha512.New()
		d.Write([]byte(r.User))
		d.Write(aclSalt)
		a.Users[r.User] = engine.PasswordHash{Salt: aclSalt, Hash: d.Sum(nil)}
	}
	return a
}

// aclLines returns an acl= value as the lines of an ACL file (the
// anonymous section first, then a `user` line before each user's rules),
// what the history's ACL events declare.
func aclLines(s string) []string {
	rules, _ := parseACL(s)
	var anon []string
	sections := map[string][]string{}
	var users []string
	for _, r := range rules {
		line := "topic " + aclWord(r.Access) + " " + r.Topic
		if r.User == "" {
			anon = append(anon, line)
			continue
		}
		if _, ok := sections[r.User]; !ok {
			users = append(users, r.User)
		}
		sections[r.User] = append(sections[r.User], line)
	}
	out := anon
	for _, u := range users {
		out = append(out, "user "+u)
		out = append(out, sections[u]...)
	}
	return out
}

// aclWord is an access kind's word in an ACL file.
func aclWord(a engine.ACLAccess) string {
	switch a {
	case engine.ACLRead:
		return "read"
	case engine.ACLWrite:
		return "write"
	case engine.ACLReadWrite:
		return "readwrite"
	}
	return "deny"
}

// declareAccess records the history's ACL events of node n's config: the
// broker's ACL file lines, a client's user name.
func (w *World) declareAccess(n *node) {
	c := n.cfg
	if c == nil {
		return
	}
	now := int64(w.sched.now)
	if n.broker && c.ACL != "" {
		w.access = brokerAccess(c.ACL)
		for _, l := range aclLines(c.ACL) {
			w.log.add(hrec{kind: model.ACL, time: now, node: n.nameID, reason: w.strs.id(l)})
		}
	}
	if !n.broker && c.User != "" {
		w.log.add(hrec{kind: model.ACL, time: now, node: n.nameID, reason: w.strs.id("user " + c.User)})
	}
}

// aclDeniesWrite reports whether the broker's ACL keeps client c from
// publishing to topic.
func (w *World) aclDeniesWrite(c int32, topic string) bool {
	if w.access == nil {
		return false
	}
	user := ""
	if n := w.nodes[c]; n.cfg != nil {
		user = n.cfg.User
	}
	return !w.access.MayPublish(user, w.nodes[c].name, topic)
}
