package main

import (
	"os"
	"testing"
)

// childEnv, set in a child's environment, makes the test binary behave as
// simrun itself (main), so tests and the live tester start "simrun broker"
// children from os.Executable() without building the command.
const childEnvTest = childEnv

func TestMain(m *testing.M) {
	if os.Getenv(childEnvTest) == "1" {
		main()
	}
	os.Exit(m.Run())
}
