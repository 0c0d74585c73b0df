package main

import (
	"fmt"
	"io"
	"slices"

	"github.com/mqttlab/mqttlab/engine"
	"github.com/mqttlab/mqttlab/sim"
)

// cmdPresets lists the engine presets.
func (e *env) cmdPresets(args []string) int {
	var rows [][2]string
	for _, p := range engine.Presets() {
		rows = append(rows, [2]string{p.Name, p.Doc})
	}
	return e.list("presets", "Lists the engine policy presets (-preset).", args, rows)
}

// cmdProfiles lists the fault profiles.
func (e *env) cmdProfiles(args []string) int {
	var rows [][2]string
	for _, p := range sim.Profiles() {
		rows = append(rows, [2]string{p.Name, p.Doc})
	}
	return e.list("profiles", "Lists the fault profiles (-profile).", args, rows)
}

// cmdScenarios lists the scenarios.
func (e *env) cmdScenarios(args []string) int {
	var rows [][2]string
	for _, s := range sim.Scenarios() {
		rows = append(rows, [2]string{s.Name, s.Doc})
	}
	return e.list("scenarios", "Lists the scenarios (-scenario).", args, rows)
}

// list parses a listing subcommand's (empty) flags and prints its rows.
func (e *env) list(cmd, doc string, args []string, rows [][2]string) int {
	fs := e.newFlagSet(cmd, "", doc)
	pos, err := fs.parse(args)
	if err != nil {
		return e.fail(cmd, err)
	}
	if len(pos) > 0 {
		return e.fail(cmd, badUsage(cmd, "unexpected argument %q (%s takes none)", pos[0], cmd))
	}
	writeRows(e.stdout, rows)
	return exitOK
}

// writeRows prints name and doc, one a line, names aligned.
func writeRows(w io.Writer, rows [][2]string) {
	width := 0
	for _, r := range rows {
		width = max(width, len(r[0]))
	}
	for _, r := range rows {
		fmt.Fprintf(w, "%-*s  %s\n", width, r[0], r[1])
	}
}

// sortedKeys returns the keys of m, sorted.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
