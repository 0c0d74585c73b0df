// Package live runs the same engine in the real world: over TCP, with wall
// time and a file-backed record store. It records histories in the model's
// vocabulary, so real runs (against mosquitto, or mosquitto's clients against
// our broker) are judged by the same spec as simulated ones.
//
// Contract.
//
//   - Store is the durable record store: one file per key (keys escaped into
//     safe file names), each with a magic, lengths and a CRC-32C. A Put
//     writes a temp file and renames it (fsyncing file and directory when the
//     Persist says Sync), so a crash leaves the old or the new record.
//     Records never drops a corrupt record silently: the error names every
//     bad file and wraps ErrCorrupt.
//   - RunClient drives an engine.Client: one event-loop goroutine owns the
//     engine and carries out its actions in order (Dial, Send, Persist,
//     timers, Deliver, Complete); one goroutine per connection reads the
//     socket into the loop. Wall time maps to engine.Time as Unix
//     nanoseconds advanced by the monotonic clock, so a rebooted driver's
//     clock keeps counting. The application calls Connect, Publish,
//     Subscribe, Unsubscribe and Disconnect, which return when the command
//     completes; its OnMessage callback runs on the loop and its nil return
//     is the engine.Ack. CutConnection and Crash inject the real faults: a
//     lost connection, and a process death after which only the store
//     survives (a new RunClient on the same store is the reboot).
//   - ServeBroker drives an engine.Broker on a net.Listener the same way.
//     Close is a kill (memory lost, the store kept); Shutdown a clean stop
//     (the engine writes what it persists at all). ConnLog gets one line per
//     connection event, and NewDiscardRecorder keeps no history, for a
//     broker that serves for days (simrun broker).
//   - Proxy is the live tester's recording TCP proxy: clients dial it, it
//     dials the broker, forwards both directions and decodes them with
//     engine/packet's stream decoder, recording the broker's view and the
//     views of the clients that record nothing themselves (external
//     programs), plus their Connected and Subscribed events, in the model's
//     vocabulary. Its faults: Cut, BlackHole (one direction), Slow (chunked,
//     delayed forwarding) and Heal.
//   - Process control for the live tester's subjects: Expand fills a
//     command template's {port} {dir} {id} {topic} {qos} {msg}; a Process
//     runs a shell command line in a process group of its own (Setpgid), so
//     Kill (SIGKILL), Pause (SIGSTOP), Resume (SIGCONT) and Terminate reach
//     every program it started; a Supervisor tracks them all so KillAll
//     leaves no orphan; FreePort asks the kernel for a port, and every wait
//     (WaitPort, Kill) is bounded.
//   - RunTest is the live tester (simrun live; docs/live.md): it starts the
//     broker (a command template, or an address it does not manage), the
//     recording proxy and the clients (ours in process, or external
//     programs whose stdout lines and exit statuses are their application
//     events), runs the workload under the fault schedule Schedule draws
//     from the seed, heals, waits (bounded) for what the model's NoLoss
//     still requires, and judges the history with model.CheckUnder against
//     the declared policy (Judge: promised violations, excused invariants
//     and the faults that excused them). It writes the run directory:
//     summary.txt, violations.txt with history excerpts, history.jsonl,
//     schedule.txt, logs/ and data/. A cancelled context (Ctrl-C) kills
//     every process it started and still judges and writes what it
//     recorded.
//   - Every driver writes Sent and Received packets (decoded from a copy of
//     the byte stream), Accepted, Acknowledged, Delivered, Subscribed,
//     Unsubscribed, Connected, ConnOpened, ConnClosed, Crash, Restart and
//     Failed events into a Recorder, which several drivers may share.
//
// Every socket write and dial has a deadline (IOTimeout); commands take a
// context. A store failure stops the driver as a crash would: the Failed
// event names the error and every pending command fails with it.
//
// Unlike engine, model and sim, this package uses goroutines, channels and
// the wall clock: it is the thin shell around the pure core.
package live
