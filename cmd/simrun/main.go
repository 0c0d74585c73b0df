// Command simrun is the lab's front door: it runs, replays and campaigns
// simulations of the MQTT engine and plots failure-rate experiments.
package main

import (
	"fmt"
	"io"
	"os"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

// run is the whole command; tests drive it directly. It returns the exit
// status: 0 ok, 1 a violation was found, 2 a usage error.
func run(args []string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "simrun: no subcommands yet")
	return 2
}
