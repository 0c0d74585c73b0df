package main

import (
	"fmt"
	"io"
	"runtime/debug"
)

// cmdVersion prints the module version, the VCS commit (and whether the
// tree was modified) and the Go version, from the binary's build info.
func (e *env) cmdVersion(args []string) int {
	fs := e.newFlagSet("version", "", "Prints simrun's module version, the VCS commit it was built from and the Go version\n(from the binary's build information, runtime/debug.ReadBuildInfo).")
	pos, err := fs.parse(args)
	if err != nil {
		return e.fail("version", err)
	}
	if len(pos) > 0 {
		return e.fail("version", badUsage("version", "unexpected argument %q (version takes no arguments)", pos[0]))
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		fmt.Fprintln(e.stdout, "simrun: no build information in this binary")
		return exitOK
	}
	if _, err := io.WriteString(e.stdout, versionText(info)); err != nil {
		return e.fail("version", ioFailure(err, "writing stdout"))
	}
	return exitOK
}

// versionText formats build info: "simrun MODULE VERSION", then the commit
// (with its time, "+modified" for a dirty tree) and the Go version.
func versionText(info *debug.BuildInfo) string {
	version := info.Main.Version
	if version == "" {
		version = "(unknown)"
	}
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	commit := settings["vcs.revision"]
	if commit == "" {
		commit = "unknown (built without VCS information)"
	} else {
		if t := settings["vcs.time"]; t != "" {
			commit += " (" + t + ")"
		}
		if settings["vcs.modified"] == "true" {
			commit += " +modified"
		}
	}
	return fmt.Sprintf("simrun %s %s\ncommit %s\ngo %s\n", info.Main.Path, version, commit, info.GoVersion)
}

// cmdHelp prints a subcommand's help (as "simrun SUBCOMMAND -h"), or the
// list of subcommands.
func (e *env) cmdHelp(args []string) int {
	fs := e.newFlagSet("help", "[SUBCOMMAND]", "Prints a subcommand's help (as 'simrun SUBCOMMAND -h'), or without one the list of subcommands.")
	pos, err := fs.parse(args)
	switch {
	case err != nil:
		return e.fail("help", err)
	case len(pos) > 1:
		return e.fail("help", badUsage("help", "want one SUBCOMMAND, got %d arguments", len(pos)))
	case len(pos) == 0 || pos[0] == "help":
		e.topUsage(e.stdout)
		return exitOK
	}
	for _, c := range commands() {
		if c.name == pos[0] {
			return c.run(e, []string{"-h"})
		}
	}
	return e.fail("help", badUsage("help", "unknown subcommand %q", pos[0]))
}
