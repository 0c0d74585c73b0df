package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// aedesDir is live/brokers/aedes: Aedes, a real MQTT broker that speaks
// only 3.1 and 3.1.1 (npm package aedes, package-lock.json there).
var aedesDir = filepath.Join("..", "..", "live", "brokers", "aedes")

// requireAedes installs Aedes into aedesDir/node_modules when missing
// (build.sh: npm ci) and returns the broker command template. Without
// Node.js or npm the test fails under CI=true (.ci/run installs them and
// runs build.sh) and skips elsewhere.
func requireAedes(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("sh", filepath.Join(aedesDir, "build.sh")).CombinedOutput()
	if err != nil {
		msg := "Aedes (live/brokers/aedes) is not installed: " + err.Error() + "\n" + string(out)
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s; CI must install it, see .ci/run", msg)
		}
		t.Skip(msg)
	}
	abs, err := filepath.Abs(filepath.Join(aedesDir, "run.sh"))
	if err != nil {
		t.Fatal(err)
	}
	return "sh " + shellWord(abs) + " {port}"
}

// TestLiveStart311OnlyBroker: a real broker that speaks only MQTT 3.1.1
// (Aedes) judged with the default -version 5 ends the run with exit 2
// naming the version (its CONNACK 0x01, unacceptable protocol version,
// and the -version that changes it), from the broker's answer, not from
// a subscribe timeout: -start-timeout is 60 s, so a run that waited for
// it would say "within 1m0s". With -version 3 the same broker runs and
// is judged (no fault: every message delivered to both subscribers).
func TestLiveStart311OnlyBroker(t *testing.T) {
	t.Parallel()
	broker := requireAedes(t)
	start := time.Now()
	r, _ := liveRun(t, "-seed", "1", "-faults", "none", "-duration", "2s", "-broker", broker, "-start-timeout", "60s")
	took := time.Since(start)
	r.want(t, exitUsage)
	for _, want := range []string{"CONNACK 0x1", "unacceptable protocol version", "MQTT 5.0", "-version 3"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	if strings.Contains(r.stderr, "within") {
		t.Errorf("the start failed on a timeout, not on the broker's answer:\n%s", r.stderr)
	}
	t.Logf("-version 5 against a 3.1.1-only broker: exit %d after %v", r.code, took.Round(time.Millisecond))

	r, _ = liveRun(t, "-seed", "1", "-faults", "none", "-duration", "2s", "-broker", broker, "-start-timeout", "60s", "-version", "3")
	r.want(t, exitOK)
	if !strings.Contains(r.stdout, "lost 0, duplicated 0") || !strings.Contains(r.stdout, "verdict      OK") {
		t.Errorf("-version 3 against Aedes:\n%s", r.stdout)
	}
}
