package mosquittotest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// ErrNotInstalled reports that a mosquitto program is not installed.
var ErrNotInstalled = errors.New("mosquitto not installed")

// InstallHint is the command that installs everything this package runs.
const InstallHint = "apt-get install -y mosquitto mosquitto-clients"

// RerunHint says how to run a skipped test again once mosquitto is
// installed. Go's test cache keys a result on the environment variables and
// the files inside the module a test reads, never on /usr/sbin/mosquitto, so
// a plain `go test ./...` after the install replays the cached skip.
const RerunHint = "then rerun with go test -count=1 (go test caches this skip and does not notice the install)"

// searchDirs are the directories looked in after PATH (Debian installs the
// broker in /usr/sbin, which is not on every user's PATH).
var searchDirs = []string{"/usr/sbin", "/usr/bin", "/usr/local/sbin", "/usr/local/bin"}

// Find returns the path of the program name (mosquitto, mosquitto_pub,
// mosquitto_sub), looking in PATH and then in the usual system directories.
func Find(name string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	for _, d := range searchDirs {
		p := filepath.Join(d, name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%w: %s not in PATH nor in %v", ErrNotInstalled, name, searchDirs)
}

// Require returns the path of the program name, or ends the test: it fails
// under CI=true and skips elsewhere, naming the install command.
func Require(t testing.TB, name string) string {
	t.Helper()
	p, err := Find(name)
	if err == nil {
		return p
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%v; CI must install it (%s), see .ci/run", err, InstallHint)
	}
	t.Skipf("%v; install it with: %s, %s", err, InstallHint, RerunHint)
	return ""
}
