package brokerfuzz

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/mqttlab/mqttlab/internal/mosquittotest"
)

// mosquittoFindings are the findings of 'simrun fuzz-broker -broker
// mosquitto' against Debian's mosquitto 2.0.11 (docs/fuzzing.md), each a
// shrunk replay file and the rule mosquitto does not enforce. The test
// fails when one no longer reproduces (a mosquitto that enforces the rule:
// the docs must then say so), and checks our broker enforces every one.
var mosquittoFindings = map[string]string{
	"overlong-remaining-length.case": "not enforced [MQTT-1.5.5-1]",
	"reserved-flags-puback.case":     "not enforced [MQTT-2.1.3-1]",
	"reserved-flags-pingreq.case":    "not enforced [MQTT-2.1.3-1]",
	"dup-on-qos0.case":               "not enforced [MQTT-3.3.1-2]",
	"shared-no-local.case":           "not enforced [MQTT-3.8.3-4]",
	"suback-from-client.case":        "not enforced [MQTT-3.9.3-2]",
	"pubrel-reason-code.case":        "not enforced [MQTT-3.6.2-1]",
}

func TestMosquittoFindings(t *testing.T) {
	m := mosquittotest.Start(t, mosquittotest.Options{})
	mosq := Target{Name: "mosquitto", Addr: m.Addr}
	ours := serveOurs(t, "")
	for name, key := range mosquittoFindings {
		f, err := os.Open(filepath.Join("testdata", "mosquitto", name))
		if err != nil {
			t.Fatal(err)
		}
		c, err := ParseCase(f)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if vs, err := Replay(mosq, c, quick); !hasKey(vs, key) {
			t.Errorf("%s: mosquitto no longer breaks %s: %v %v", name, key, vs, err)
		}
		if vs, err := Replay(ours, c, quick); err != nil || len(vs) != 0 {
			t.Errorf("%s: our broker: %v %v", name, vs, err)
		}
	}
}
