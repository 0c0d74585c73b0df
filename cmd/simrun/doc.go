// Command simrun is the lab's front door: it runs, replays and campaigns
// deterministic simulations of the MQTT engine (package sim), judges them by
// the abstract spec (package model), and plots failure-rate experiments
// (package plots).
//
//	simrun run -seed 42 [-preset P -profile P -scenario S -version 3|5 -workload K=V,...] [-json] [-all] [-trace F] [-html F] [-save F] [-plan F]
//	simrun replay FILE [-json] [-all] [-trace F] [-html F]
//	simrun campaign [-seeds N -start S -workers W -out DIR -resume|-force -shard i/n] [world flags]
//	simrun shrink FILE | -seed N [world flags] [-out F -budget N -timeout D -html F] | shrink -bench [-bench-seeds N ...]
//	simrun merge DIR...
//	simrun experiment NAME [-trials N -seed S -workers W -out DIR] | experiment -list
//	simrun live [-broker ours|mosquitto|CMD | -broker-addr A] [-subscriber CMD -publisher CMD] [-faults K -seed N -duration D -promise P -out DIR]
//	simrun broker -data DIR [-listen ADDR -preset P]
//	simrun presets | profiles | scenarios
//	simrun version
//	simrun help [SUBCOMMAND]
//
// Every output file or directory flag is -out (shrink's older -o is kept
// as its alias). simrun version prints the module version, the VCS commit
// and the Go version from the binary's build info; simrun help CMD is
// simrun CMD -h.
//
// Every printed command (replay lines, failing.txt, the merge, resume and
// shrink hints, -json "replay", the charts' replay lines, live's replay
// line) names this binary as it was invoked — its base name when that is
// what PATH finds, else the absolute path it was run as — and every file
// and directory by its absolute path, so it runs as printed from any
// directory.
//
// simrun live is the live tester (live.RunTest, docs/live.md): real broker
// and client processes under real faults drawn from the seed, recorded by a
// proxy and judged by the same model. The tester owns its run directory
// (-out): it marks it (.simrun-live), and a rerun into it (the printed
// replay command, the same -out twice, a mosquitto run's directory for a
// -broker ours run) first clears the earlier run's files, so nothing of
// that run reaches the next; a directory holding other files is refused
// (exit 2) unless -force, which keeps them. Its first stdout line names
// the run's world: seed, broker, clients, faults, promise, directory. simrun broker serves this project's
// broker over TCP with its file store until signalled (the live tester's
// -broker ours runs it as a child process). It serves v5 shared
// subscriptions and Subscription Identifiers by default, as mosquitto 2.0
// does (the config keys shared_subscriptions and subscription_identifiers
// turn them off); a 3.1.1 client's $share/ filter is refused (SUBACK 0x80),
// never granted and then silent — the model judges the refusal (nothing
// owed to the filter) and SharedDelivery catches a grant that delivers to
// no member.
//
// main is a thin call into run(args, stdout, stderr), which the tests drive.
// One exit-status table holds for every subcommand (exitTable, printed by
// simrun -h; TestExitStatuses drives each subcommand to each status): 0
// nothing judged was violated, 1 a violation (or a run that could not
// complete) was found, 2 a usage error (bad flag, value, name or input
// file: one line naming it, then a hint to -h; live: a subject that did
// not start, or a run directory holding other files without -force), 3 an
// I/O failure (an output directory, file or stdout could not be written:
// shrink -out /dev/full, live -out under a file, a full stdout), 130
// stopped by SIGINT or SIGTERM (campaign, shrink, live, after writing what
// they have). Number flags say what they want ("must be a positive
// number"); -version takes 3 (or 3.1.1) and 5 (or 5.0) only.
//
// # Judging
//
// A run fails only on invariants it is promised (model.Promises under the
// faults its history shows); -all lists the others as information. -judge
// chooses whose promise: "spec" (the default) holds every preset to what the
// fixed engine promises under the run's faults, which is what a correct MQTT
// engine keeps — for preset fixed that is exactly model.CheckPromised, and a
// legacy preset's seed bugs (lost messages, stuck sessions) show up as the
// canaries they are; "preset" holds a preset only to its own promises
// (model.CheckPromised with the preset's policy), under which the legacy
// presets' documented losses are not failures. The summary says which.
//
// -html FILE (run, replay, shrink: of the shrunk plan's run) writes the
// run's sequence chart (package seqchart): one
// self-contained HTML page, the violation and the events it cites first.
//
// A text line prints a violation's reason with its long lists cut to a few
// items and a count (sim.ShortReason), and the history events it cites;
// -json and results.jsonl keep the whole reason.
//
// # Shrinking
//
// shrink reduces a failing plan file or seed with sim.Shrink, judged as run
// judges (-judge), and writes the shrunk plan (first line "# shrunk from N
// ops to M ops in D") and its replay command. Progress goes to stderr;
// SIGINT or SIGTERM writes the smallest failing plan found so far and exits
// 130; -timeout and -budget bound it. shrink never overwrites its input
// (-out naming it is refused, exit 2), nor by default a file that is
// there already (an earlier shrink, a committed fixture): FILE.min.plan
// taken, it writes FILE-2.min.plan, FILE-3.min.plan. shrink -bench runs the campaign of
// each preset with GOMAXPROCS 1 and shrinks its failing seeds one at a
// time, -timeout then bounding each shrink's CPU time (getrusage: other work
// on the machine does not count), and prints the share shrunk to at most
// -bench-max-ops ops within it and the medians and 90th percentiles of ops
// before and after, CPU time and runs. Its campaign step prints the same
// progress line as a campaign (stderr, every 5 s) and stops at SIGINT or
// SIGTERM between two seeds: it then prints the table of what it shrank
// (and writes -bench-csv) and exits 130, as when a signal comes while it
// shrinks.
//
// # Campaigns
//
// A campaign runs seeds start..start+seeds-1 of one world over -workers
// goroutines (parallelism lives only here, above the deterministic world).
// Every finished seed is appended at once to DIR/results.jsonl (seed,
// checksum, violations by invariant, first violation, stats), so a killed
// campaign loses no finished seed; a failing seed's plan is written to
// DIR/seed-N.plan before its line, and `simrun replay DIR/seed-N.plan`
// reproduces it. Each failing seed is then shrunk by its worker for at
// most -shrink (default 30s of wall time; 0 turns it off; a signal ends it
// with the smallest plan so far) to DIR/seed-N.min.plan, its record carries
// ops and min_ops, the summary a line with the shrunk sizes (median and 90th
// percentile), and the replay list the shrunk plan's command first. A
// passing seed costs nothing more, so the default campaign (which under
// fixed has no failures) runs as fast as before. -resume skips the seeds results.jsonl already has (a line
// cut short by a kill is dropped and that seed rerun; a complete last line
// without its newline gets one before anything is appended). -shard i/n runs the
// seeds s with (s-start)%n == i; `simrun merge` of the shards' directories
// prints the unsharded campaign's summary, because the summary is computed
// from the set of results, sorted, never from their order or the worker
// count. DIR/campaign.json (manifest) says which campaign the directory holds:
// world, seed range, shard. merge refuses directories that are not the shards
// of one campaign or do not hold each of its seeds exactly once (a shard
// interrupted, cut short, empty, missing or given twice), naming the missing
// or repeated seeds as compact runs ("23..49 step 2") and the command that
// finishes a shard, and prints no summary (exit 2); directories from before
// campaign.json merge by the seeds they hold, with a warning. An interrupted
// campaign's summary, and a shard's own, says the campaign is INCOMPLETE
// on its count line ("…, 2 failing (5.00%); INCOMPLETE: interrupted, 12 of
// 40 seeds done, 1 shrink(s) cut short"), in summary.txt too, instead of a
// bare "violations: none". A failing seed whose shrink a signal cut short
// keeps the smallest plan so far, its record says so
// ("shrink_interrupted": true, "[shrunk 34 -> 20 ops (interrupted: …)]"),
// and -resume runs that seed again and shrinks it in full. shrink's last
// progress line ends "(done)", "(interrupted)", "(stopped by the timeout)"
// or "(stopped by the run budget)".
// DIR/summary.txt holds the summary; DIR/failing.txt every failing seed's
// replay command. The default DIR is named after the world
// (out/campaign-PRESET-PROFILE-SCENARIO-vVERSION-JUDGE, a shard's
// shard-i-of-n under it). A campaign without -resume first removes an
// earlier run's results.jsonl, campaign.json, summary.txt, failing.txt and
// seed-*.plan in DIR — of the same campaign only: a DIR holding another
// campaign's results (another world, seed range or shard) is refused unless
// -force.
// SIGINT or SIGTERM stops dispatching, lets the in-flight seeds finish,
// prints the summary so far and the -resume command, and exits 130. Signals
// stay caught until the summary is written and the -resume command printed:
// a second one (Ctrl-C twice, or `timeout -s INT` signalling the process
// and then its group) is noted on stderr and never skips them.
//
// # One world
//
// Every command that takes world flags (run, run -plan's overrides,
// shrink, campaign) defaults to one world, the campaign's: scenario swarm
// with sim.DefaultWorkload's pins, preset fixed, profile swarm, judge spec.
// So a seed a campaign reports failing runs, shrinks and replays with the
// same flags, or with the commands the campaign printed. Each prints the
// world it ran on its first line (run and replay: "seed N  profile P
// preset P  scenario S  version V"; shrink: "shrink: seed N, preset P,
// ..."; campaign: "campaign: seeds A..B ..."). Under swarm each client
// draws its protocol version: the world's version is "mixed" (in the run
// header, the plan's "version mixed" line, results.jsonl and the campaign
// directory's name, ...-vmixed-...); -version 3 (or -workload version=4)
// pins every client to MQTT 3.1.1 and shows as "3.1.1".
//
// The default campaign (swarm scenario with sim.DefaultWorkload's pins,
// preset fixed, profile swarm) runs defaultSeeds seeds (sized at the
// standard scenario's rate, the default before; a swarm seed costs about 1.2
// to 1.6 times as much). -workload pins the swarm scenario's dimensions
// over the defaults (run, campaign, shrink), and the replay commands repeat
// the pins; only -scenario swarm (the default) takes it. The progress bar (seeds
// done, seeds/s, failing so far, ETA) shows when stdout is a terminal;
// otherwise (a CI log, a file) a campaign or experiment prints the same as a
// line on stderr every 5 s ("campaign: 901/3000 seeds done, 0 failing, 59.8
// seeds/s, about 35s left").
package main
