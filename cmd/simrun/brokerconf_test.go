package main

import (
	"errors"
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mqttlab/mqttlab/engine"
	"github.com/mqttlab/mqttlab/internal/mosquittotest"
)

// TestBrokerConfigErrors: every bad config line is refused naming file, line
// and key.
func TestBrokerConfigErrors(t *testing.T) {
	dir := t.TempDir()
	fixed, _ := engine.PresetByName("fixed")
	base := engine.DefaultBrokerConfig(fixed.Broker)
	for _, c := range []struct{ name, text, want string }{
		{"unknown key", "max_keepalive 10\nmaxx 3\n", `:2: key "maxx": unknown key`},
		{"two values", "receive_maximum 1 2", `:1: key "receive_maximum": want one value, got 2`},
		{"not a number", "max_keepalive -1", `key "max_keepalive": "-1" is not a number in 0..65535`},
		{"too big", "receive_maximum 70000", `"70000" is not a number in 0..65535`},
		{"bad flag", "shared_subscriptions yes", `"yes" is not true or false`},
		{"bad persistence", "persistence sometimes", `"sometimes" is not every, periodic or none`},
		{"bad preset", "preset nope", `key "preset"`},
		{"missing file", "password_file nope.txt", `key "password_file"`},
		{"bad acl", "acl_file acl.bad", `line 1: unknown keyword "grant"`},
		{"invalid config", "receive_maximum 0", "ReceiveMaximum is 0"},
	} {
		writeFile(t, dir, "acl.bad", "grant all\n")
		path := writeFile(t, dir, "broker.conf", c.text)
		_, err := loadBrokerConfig(path, base)
		if !errors.Is(err, errBrokerConfig) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "broker.conf") {
			t.Errorf("%s: %v, want an error naming broker.conf and %q", c.name, err, c.want)
		}
	}
	path := writeFile(t, dir, "broker.conf", "# limits\nmax_keepalive 30 # seconds\n\nshared_subscriptions true\nallow_anonymous false\n")
	cfg, err := loadBrokerConfig(path, base)
	if err != nil || cfg.MaxKeepAlive != 30 || !cfg.SharedSubscriptions || cfg.Access == nil || cfg.Access.Anonymous {
		t.Fatalf("good config: %+v, %v", cfg, err)
	}
}

// waitMsgs waits for n messages of a mosquitto_sub.
func waitMsgs(t *testing.T, s *mosquittotest.Subscriber, n int) []string {
	t.Helper()
	got, err := s.WaitMessages(n, mosquittotest.ToolTimeout)
	if err != nil {
		t.Fatalf("mosquitto_sub: %v (got %q, stderr %s)", err, got, s.Stderr())
	}
	return got
}

// TestBrokerConfigRealClients starts simrun broker with a config file (a
// password file written by mosquitto_passwd, an ACL file, shared
// subscriptions and subscription identifiers on) and drives it with
// Debian's mosquitto_sub and mosquitto_pub in both protocol versions.
func TestBrokerConfigRealClients(t *testing.T) {
	passwd := mosquittotest.Require(t, "mosquitto_passwd")
	dir := t.TempDir()
	pw := filepath.Join(dir, "passwd")
	for i, up := range [][2]string{{"alice", "wonderland"}, {"bob", "builder"}} {
		args := []string{"-b", pw, up[0], up[1]}
		if i == 0 {
			args = append([]string{"-c"}, args...)
		}
		if out, err := exec.Command(passwd, args...).CombinedOutput(); err != nil {
			t.Fatalf("mosquitto_passwd: %v %s", err, out)
		}
	}
	writeFile(t, dir, "acl", "user alice\ntopic readwrite a/#\ntopic read s/#\nuser bob\ntopic write s/#\ntopic read a/x\n")
	conf := writeFile(t, dir, "broker.conf", "password_file passwd\nacl_file acl\nallow_anonymous false\n"+
		"shared_subscriptions true\nsubscription_identifiers true\nmax_keepalive 60\n")
	b := startBrokerChild(t, "127.0.0.1:0", filepath.Join(dir, "data"), "-config", conf)
	alice := []string{"-u", "alice", "-P", "wonderland"}
	bob := []string{"-u", "bob", "-P", "builder"}
	for _, v := range []string{"mqttv311", "mqttv5"} {
		t.Run(v, func(t *testing.T) {
			ver := []string{"-V", v}
			// Refused CONNECTs: a wrong password, and no user name.
			for _, creds := range [][]string{{"-u", "alice", "-P", "nope"}, nil} {
				args := append(append(append([]string{}, ver...), creds...), "-t", "a/x", "-C", "1", "-W", "3")
				_, err := mosquittotest.Run("mosquitto_sub", b.addr, mosquittotest.ToolTimeout, args...)
				if err == nil || !(strings.Contains(strings.ToLower(err.Error()), "bad user name or password") || strings.Contains(strings.ToLower(err.Error()), "not authori")) {
					t.Errorf("credentials %v: %v, want a refusal", creds, err)
				}
			}
			// ACL: alice reads and writes a/#; bob only reads a/x, so his
			// PUBLISH is refused (v5 PUBACK 0x87) or dropped (3.1.1).
			sub := mosquittotest.StartSub(t, b.addr, append(append(append([]string{}, ver...), alice...), "-i", "alice-"+v, "-t", "a/#", "-v")...)
			mosquittotest.Pub(t, b.addr, append(append(append([]string{}, ver...), bob...), "-t", "a/x", "-m", "denied", "-q", "1")...)
			mosquittotest.Pub(t, b.addr, append(append(append([]string{}, ver...), alice...), "-t", "a/y", "-m", "allowed", "-q", "1")...)
			if got := waitMsgs(t, sub, 1); got[0] != "a/y allowed" {
				t.Errorf("alice got %q first, want the allowed message only", got)
			}
		})
	}
	// MQTT 3.1 (MQIsdp) is refused with return code 0x01, which a 3.1
	// client reads as "unacceptable protocol version".
	if _, err := mosquittotest.Run("mosquitto_pub", b.addr, mosquittotest.ToolTimeout,
		append([]string{"-V", "mqttv31", "-t", "a/x", "-m", "x"}, alice...)...); err == nil ||
		!strings.Contains(strings.ToLower(err.Error()), "unacceptable protocol version") {
		t.Errorf("MQTT 3.1 client: %v, want a refusal naming the protocol version", err)
	}
	// v5 shared subscription: two members share ten messages, each once.
	v5 := []string{"-V", "mqttv5"}
	m1 := mosquittotest.StartSub(t, b.addr, append(append(append([]string{}, v5...), alice...), "-i", "m1", "-t", "$share/g/s/#", "-q", "1")...)
	m2 := mosquittotest.StartSub(t, b.addr, append(append(append([]string{}, v5...), alice...), "-i", "m2", "-t", "$share/g/s/#", "-q", "1")...)
	for i := 0; i < 10; i++ {
		mosquittotest.Pub(t, b.addr, append(append(append([]string{}, v5...), bob...), "-t", "s/k", "-m", "m"+string(rune('0'+i)), "-q", "1")...)
	}
	got1, got2 := waitMsgs(t, m1, 5), waitMsgs(t, m2, 5)
	seen := map[string]int{}
	for _, m := range append(got1, got2...) {
		seen[m]++
	}
	if len(seen) != 10 {
		t.Errorf("shared group got %v and %v, want the ten messages once each", got1, got2)
	}
	// v5 subscription identifier: printed by mosquitto_sub's %S.
	sid := mosquittotest.StartSub(t, b.addr, append(append(append([]string{}, v5...), alice...), "-i", "sid", "-t", "s/#",
		"-D", "subscribe", "subscription-identifier", "42", "-F", "%S %t %p")...)
	mosquittotest.Pub(t, b.addr, append(append(append([]string{}, v5...), bob...), "-t", "s/id", "-m", "x", "-q", "1")...)
	if got := waitMsgs(t, sid, 1); got[0] != "42 s/id x" {
		t.Errorf("subscription identifier: got %q, want %q", got[0], "42 s/id x")
	}
}

// TestBrokerConfigDriverLimits: connect_timeout and max_connections are read
// into the driver's limits (0: none), and bad values are refused by key.
func TestBrokerConfigDriverLimits(t *testing.T) {
	dir := t.TempDir()
	fixed, _ := engine.PresetByName("fixed")
	base := engine.DefaultBrokerConfig(fixed.Broker)
	for _, c := range []struct {
		text    string
		timeout time.Duration
		max     int
	}{
		{"", 0, 0},
		{"connect_timeout 3\nmax_connections 100\n", 3 * time.Second, 100},
		{"connect_timeout 0\nmax_connections 0\n", -1, -1},
	} {
		_, lim, err := loadBrokerFile(writeFile(t, dir, "broker.conf", c.text), base)
		if err != nil || lim.connectTimeout != c.timeout || lim.maxConnections != c.max {
			t.Errorf("%q: %+v, %v; want timeout %v, max %d", c.text, lim, err, c.timeout, c.max)
		}
	}
	for _, c := range []struct{ text, want string }{
		{"connect_timeout soon", `key "connect_timeout": "soon" is not a number of seconds`},
		{"connect_timeout 99999", `key "connect_timeout"`},
		{"max_connections -3", `key "max_connections": "-3" is not a number`},
	} {
		_, _, err := loadBrokerFile(writeFile(t, dir, "broker.conf", c.text), base)
		if !errors.Is(err, errBrokerConfig) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.text, err, c.want)
		}
	}
}

// TestBrokerDefaults: simrun broker with no config serves v5 shared
// subscriptions and Subscription Identifiers (as mosquitto 2.0 does),
// refuses a 3.1.1 client's $share/ filter (SUBACK 0x80: never granted
// and then silent), and the config keys turn both features off.
func TestBrokerDefaults(t *testing.T) {
	mosquittotest.Require(t, "mosquitto_sub")
	dir := t.TempDir()
	b := startBrokerChild(t, "127.0.0.1:0", filepath.Join(dir, "data"))
	v5 := []string{"-V", "mqttv5"}
	m1 := mosquittotest.StartSub(t, b.addr, append(append([]string{}, v5...), "-i", "m1", "-t", "$share/g/s/#", "-q", "1")...)
	m2 := mosquittotest.StartSub(t, b.addr, append(append([]string{}, v5...), "-i", "m2", "-t", "$share/g/s/#", "-q", "1")...)
	sid := mosquittotest.StartSub(t, b.addr, append(append([]string{}, v5...), "-i", "sid", "-t", "s/#",
		"-D", "subscribe", "subscription-identifier", "42", "-F", "%S %t %p")...)
	for i := 0; i < 4; i++ {
		mosquittotest.Pub(t, b.addr, append(append([]string{}, v5...), "-t", "s/k", "-m", "m"+string(rune('0'+i)), "-q", "1")...)
	}
	if got := append(waitMsgs(t, m1, 2), waitMsgs(t, m2, 2)...); len(got) != 4 {
		t.Errorf("the shared group got %v, want 4 messages", got)
	}
	if got := waitMsgs(t, sid, 1); got[0] != "42 s/k m0" {
		t.Errorf("subscription identifier: got %q", got[0])
	}
	if out := subackOf(t, b.addr, "mqttv311", "$share/g/s/#"); !strings.Contains(out, "Subscribed (mid: 1): 128") {
		t.Errorf("3.1.1 $share/ subscription: %s, want a refusal (128)", out)
	}

	conf := writeFile(t, dir, "off.conf", "shared_subscriptions false\nsubscription_identifiers false\n")
	off := startBrokerChild(t, "127.0.0.1:0", filepath.Join(dir, "data-off"), "-config", conf)
	if out := subackOf(t, off.addr, "mqttv5", "$share/g/s/#"); !strings.Contains(out, "Subscribed (mid: 1): 158") {
		t.Errorf("shared_subscriptions false: %s, want a refusal (0x9E, 158)", out)
	}
}

// subackOf subscribes to filter with mosquitto_sub -d in protocol version
// v and returns its output, which shows the SUBACK's reason code.
func subackOf(t *testing.T, addr, v, filter string) string {
	t.Helper()
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := exec.Command(mosquittotest.Require(t, "mosquitto_sub"), "-h", host, "-p", port, "-V", v, "-t", filter, "-d", "-C", "1", "-W", "3").CombinedOutput()
	return string(out)
}
