package engine

import (
	"crypto/sha512"
	"encoding/base64"
	"errors"
	"os"
	"strings"
	"testing"
)

// TestPasswordFile reads the file mosquitto_passwd wrote
// (testdata/broker/access.passwd) and a $6$ line, and verifies passwords.
func TestPasswordFile(t *testing.T) {
	text, err := os.ReadFile("testdata/broker/access.passwd")
	if err != nil {
		t.Fatal(err)
	}
	salt := []byte("pepper")
	sum := sha512.Sum512(append([]byte("old"), salt...))
	six := "carol:$6$" + base64.StdEncoding.EncodeToString(salt) + "$" + base64.StdEncoding.EncodeToString(sum[:])
	users, err := ParsePasswordFile(string(text) + "\n# a comment\n\n" + six + "\n")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		user, pass string
		ok         bool
	}{
		{"alice", "wonderland", true}, {"alice", "wonderlanD", false}, {"bob", "builder", true},
		{"bob", "wonderland", false}, {"carol", "old", true}, {"carol", "", false},
	} {
		if got := users[c.user].Verify([]byte(c.pass)); got != c.ok {
			t.Errorf("%s/%q: Verify = %v, want %v", c.user, c.pass, got, c.ok)
		}
	}
}

// TestAccessFileErrors checks every refusal names its line and problem.
func TestAccessFileErrors(t *testing.T) {
	good := "$7$101$c2FsdA==$" + base64.StdEncoding.EncodeToString(make([]byte, 64))
	for _, c := range []struct {
		name, text, want string
		acl              bool
	}{
		{"no colon", "alice", "line 1: want user:hash", false},
		{"twice", "a:" + good + "\na:" + good, `line 2: user "a" listed twice`, false},
		{"bad format", "\na:$5$x$y", "line 2 (user \"a\"): hash is neither", false},
		{"bad iterations", "a:$7$0$c2FsdA==$x", "iterations \"0\"", false},
		{"short hash", "a:$7$101$c2FsdA==$c2FsdA==", "not 64 bytes", false},
		{"acl keyword", "topic a/b\nsubscribe x", `line 2: unknown keyword "subscribe"`, true},
		{"acl access", "topic all a/b", `access "all"`, true},
		{"acl filter", "user u\ntopic read a/#/b", `line 2: topic "a/#/b" is not a valid topic filter`, true},
		{"acl user", "user", "line 1: user without a name", true},
	} {
		var err error
		if c.acl {
			_, err = ParseACLFile(c.text)
		} else {
			_, err = ParsePasswordFile(c.text)
		}
		if !errors.Is(err, ErrAccessFile) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

// TestACLCovers is the table of the subscription and topic-name checks.
func TestACLCovers(t *testing.T) {
	for _, c := range []struct {
		rule, topic string
		name, want  bool
	}{
		{"a/#", "a/b/c", true, true}, {"a/#", "a", true, true}, {"a/+", "a/b/c", true, false},
		{"a/#", "a/#", false, true}, {"a/#", "a/+/c", false, true}, {"a/+", "a/#", false, false},
		{"a/+/c", "a/+/c", false, true}, {"a/b", "a/+", false, false}, {"#", "x/#", false, true},
		{"a/b", "a/b", false, true}, {"a/b", "a/b/c", false, false}, {"a/+", "a", false, false},
	} {
		if got := aclCovers(c.rule, c.topic, c.name); got != c.want {
			t.Errorf("aclCovers(%q, %q, name=%v) = %v, want %v", c.rule, c.topic, c.name, got, c.want)
		}
	}
}
