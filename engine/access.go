package engine

import (
	"crypto/pbkdf2"
	"crypto/sha512"
	"crypto/subtle"
	"strings"
)

// Access is the broker's authentication and authorization: who may connect
// (a user table of password hashes, and whether a CONNECT without a user
// name is let in) and what each user may publish and subscribe to (topic
// rules). A nil *Access in BrokerConfig lets everyone do everything.
//
// The formats are mosquitto's, so its tools and files serve: a password file
// as `mosquitto_passwd` writes it and an ACL file of `user`, `topic` and
// `pattern` lines (ParsePasswordFile, ParseACLFile). Access holds data only;
// checking is pure computation, so the broker stays sans-IO and deterministic.
type Access struct {
	// Anonymous lets a CONNECT without a user name in; its topic rules are
	// the ACL file's lines before the first `user` line.
	Anonymous bool
	// Users maps a user name to its password hash. A CONNECT with a user
	// name not here, or with a password that does not match, is refused.
	Users map[string]PasswordHash
	// ACL says topic rules are in force: a client may then publish and
	// subscribe only where one of its Rules allows it (mosquitto's acl_file
	// semantics; an ACL without rules allows nothing). Without it every
	// client that connected may use every topic.
	ACL bool
	// Rules are the topic rules, in file order.
	Rules []ACLRule
}

// PasswordHash is one user's entry of a mosquitto password file: PBKDF2 with
// SHA-512 (`$7$`, what mosquitto_passwd 2.x writes) or salted SHA-512 (`$6$`,
// mosquitto 1.x).
type PasswordHash struct {
	Iterations int    // PBKDF2 iterations; 0 for a `$6$` hash
	Salt       []byte // the decoded salt
	Hash       []byte // the decoded hash (64 bytes)
}

// Verify reports whether password matches the hash (constant time in the
// hash comparison).
func (h PasswordHash) Verify(password []byte) bool {
	var sum []byte
	if h.Iterations > 0 {
		var err error
		sum, err = pbkdf2.Key(sha512.New, string(password), h.Salt, h.Iterations, len(h.Hash))
		if err != nil {
			return false
		}
	} else {
		d := sha512.New()
		d.Write(password)
		d.Write(h.Salt)
		sum = d.Sum(nil)
	}
	return len(sum) == len(h.Hash) && subtle.ConstantTimeCompare(sum, h.Hash) == 1
}

// ACLAccess is what a topic rule grants, or (Deny) takes away.
type ACLAccess uint8

// The access kinds of a topic rule.
const (
	ACLRead      ACLAccess = 1 << iota // subscribe (and receive)
	ACLWrite                           // publish
	ACLDeny                            // neither, whatever other rules say
	ACLReadWrite = ACLRead | ACLWrite
)

// ACLRule is one `topic` or `pattern` line of an ACL file.
type ACLRule struct {
	// User is the user the rule is for; "" for the anonymous section. A
	// pattern rule applies to every client whatever User says.
	User string
	// Pattern says the rule is a `pattern` line: %u and %c in its topic stand
	// for the client's user name and client id.
	Pattern bool
	// Topic is the rule's topic filter (wildcards allowed).
	Topic string
	// Access is what the rule grants or denies.
	Access ACLAccess
}

// accessClient is who a connection authenticated as.
type accessClient struct {
	known     bool // set at CONNECT; a session restored after a restart has not reconnected yet
	user      string
	anonymous bool
	clientID  string
}

// authenticate checks a CONNECT's credentials: accessOK, a bad user name or
// password, or not authorized (no user name where anonymous access is off).
func (a *Access) authenticate(hasUser bool, user string, hasPassword bool, password []byte) refusalKind {
	if a == nil {
		return accessOK
	}
	if !hasUser {
		if a.Anonymous {
			return accessOK
		}
		return accessNotAuthorized
	}
	h, ok := a.Users[user]
	if !ok || !hasPassword || !h.Verify(password) {
		return accessBadCredentials
	}
	return accessOK
}

// refusalKind is the outcome of a CONNECT's authentication.
type refusalKind uint8

const (
	accessOK refusalKind = iota
	accessBadCredentials
	accessNotAuthorized
)

// allowed reports whether cl may use topic: publish to it (ACLWrite, a topic
// name), subscribe to it (ACLRead, a filter), or receive a message on it
// (ACLRead with name set: a topic name).
func (a *Access) allowed(cl accessClient, topic string, want ACLAccess, name bool) bool {
	if a == nil || !a.ACL {
		return true
	}
	granted := false
	for _, r := range a.Rules {
		if !r.appliesTo(cl) {
			continue
		}
		pattern := r.Topic
		if r.Pattern {
			pattern = strings.NewReplacer("%u", cl.user, "%c", cl.clientID).Replace(pattern)
		}
		if !aclCovers(pattern, topic, name) {
			continue
		}
		if r.Access&ACLDeny != 0 {
			return false // a deny rule wins over every grant
		}
		if r.Access&want != 0 {
			granted = true
		}
	}
	return granted
}

// appliesTo reports whether the rule is one of cl's: its user's rules, the
// anonymous section's for an anonymous client, and every pattern rule.
func (r ACLRule) appliesTo(cl accessClient) bool {
	switch {
	case r.Pattern:
		return true
	case cl.anonymous:
		return r.User == ""
	default:
		return r.User != "" && r.User == cl.user
	}
}

// aclCovers reports whether a rule's topic filter covers topic: a topic
// name (name set) when the filter matches it; a subscription's filter when
// every topic it can match is matched by the rule's (a wildcard in the
// subscription is covered only by a wildcard of the rule, as
// mosquitto_sub_matches_acl has it).
func aclCovers(rule, topic string, name bool) bool {
	if name {
		return filterMatches(rule, []byte(topic))
	}
	rl, tl := strings.Split(rule, "/"), strings.Split(topic, "/")
	for i, r := range rl {
		if r == "#" {
			return true
		}
		if i >= len(tl) {
			return false
		}
		switch t := tl[i]; {
		case r == "+":
			if t == "#" {
				return false
			}
		case r != t:
			return false
		}
	}
	return len(rl) == len(tl)
}

// MayPublish reports whether a client connected as user (anonymous when
// "") with client id clientID may publish to topic: what the broker
// decides of each PUBLISH (a tester's expectations ask it too).
func (a *Access) MayPublish(user, clientID, topic string) bool {
	return a.allowed(accessClient{known: true, user: user, anonymous: user == "", clientID: clientID}, topic, ACLWrite, true)
}
