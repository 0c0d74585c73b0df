package engine

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrAccessFile is wrapped by every error of ParsePasswordFile and
// ParseACLFile; the message names the line and what is wrong with it.
var ErrAccessFile = errors.New("engine: bad access file")

// ParsePasswordFile reads a mosquitto password file: one `user:hash` line a
// user, where hash is `$7$iterations$salt$hash` (PBKDF2-SHA512) or
// `$6$salt$hash` (salted SHA-512), salt and hash in standard base64. Blank
// lines and lines starting with # are skipped.
func ParsePasswordFile(text string) (map[string]PasswordHash, error) {
	users := make(map[string]PasswordHash)
	for n, line := range strings.Split(text, "\n") {
		line = strings.TrimRight(line, "\r")
		if strings.TrimSpace(line) == "" || strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		user, hash, ok := strings.Cut(line, ":")
		if !ok || user == "" {
			return nil, fmt.Errorf("%w: line %d: want user:hash", ErrAccessFile, n+1)
		}
		if _, dup := users[user]; dup {
			return nil, fmt.Errorf("%w: line %d: user %q listed twice", ErrAccessFile, n+1, user)
		}
		h, err := parsePasswordHash(hash)
		if err != nil {
			return nil, fmt.Errorf("%w: line %d (user %q): %v", ErrAccessFile, n+1, user, err)
		}
		users[user] = h
	}
	return users, nil
}

// parsePasswordHash reads one `$7$...` or `$6$...` hash.
func parsePasswordHash(s string) (PasswordHash, error) {
	f := strings.Split(s, "$")
	var h PasswordHash
	var salt, sum string
	switch {
	case len(f) == 5 && f[0] == "" && f[1] == "7":
		it, err := strconv.Atoi(f[2])
		if err != nil || it < 1 {
			return h, fmt.Errorf("iterations %q is not a positive number", f[2])
		}
		h.Iterations, salt, sum = it, f[3], f[4]
	case len(f) == 4 && f[0] == "" && f[1] == "6":
		salt, sum = f[2], f[3]
	default:
		return h, errors.New("hash is neither $7$iterations$salt$hash nor $6$salt$hash")
	}
	var err error
	if h.Salt, err = base64.StdEncoding.DecodeString(salt); err != nil || len(h.Salt) == 0 {
		return h, fmt.Errorf("salt %q is not base64", salt)
	}
	if h.Hash, err = base64.StdEncoding.DecodeString(sum); err != nil || len(h.Hash) != 64 {
		return h, fmt.Errorf("hash %q is not 64 bytes of base64", sum)
	}
	return h, nil
}

// ParseACLFile reads a mosquitto ACL file: `user NAME` starts a user's
// section (lines before the first are the anonymous clients'), `topic
// [read|write|readwrite|deny] FILTER` grants (or denies) the section's user,
// `pattern [access] FILTER` applies to every client with %u and %c replaced
// by its user name and client id. Blank lines and # comments are skipped.
func ParseACLFile(text string) ([]ACLRule, error) {
	rules := []ACLRule{}
	user := ""
	for n, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		kw, rest, _ := strings.Cut(line, " ")
		rest = strings.TrimSpace(rest)
		switch kw {
		case "user":
			if rest == "" {
				return nil, fmt.Errorf("%w: line %d: user without a name", ErrAccessFile, n+1)
			}
			user = rest
		case "topic", "pattern":
			r, err := parseACLRule(rest)
			if err != nil {
				return nil, fmt.Errorf("%w: line %d: %v", ErrAccessFile, n+1, err)
			}
			r.User, r.Pattern = user, kw == "pattern"
			rules = append(rules, r)
		default:
			return nil, fmt.Errorf("%w: line %d: unknown keyword %q (want user, topic or pattern)", ErrAccessFile, n+1, kw)
		}
	}
	return rules, nil
}

// parseACLRule reads `[access] FILTER`.
func parseACLRule(s string) (ACLRule, error) {
	r := ACLRule{Access: ACLReadWrite, Topic: s}
	if kw, rest, ok := strings.Cut(s, " "); ok {
		switch kw {
		case "read":
			r.Access = ACLRead
		case "write":
			r.Access = ACLWrite
		case "readwrite":
			r.Access = ACLReadWrite
		case "deny":
			r.Access = ACLDeny
		default:
			return r, fmt.Errorf("access %q is not read, write, readwrite or deny", kw)
		}
		r.Topic = strings.TrimSpace(rest)
	}
	if !validFilter(r.Topic) {
		return r, fmt.Errorf("topic %q is not a valid topic filter", r.Topic)
	}
	return r, nil
}
