// Package properties holds the lab's rapid properties, exported so the fuzz
// package (and longer campaigns) can reuse them, and the tests that run them.
//
// # Contract
//
// GenCase builds a bounded run (sim.Config and sim.Plan) from a Chooser:
// rapid (RapidChooser) or the fuzz package's byte consumer, so both shrink
// and decode plans the same way. A Judge decides which violations count:
// those a model.Policy promises under the faults the history shows
// (model.CheckPromised). PlanProperty is the central property (no counted
// violation for any generated plan); MachineProperty drives a live
// sim.World with plan operations as rapid state-machine actions, judging
// after every action and after the heal (liveness); CrashSweep crashes
// every node at every crash point in turn, and CrashSweepDisk does so
// three times, with crashes that keep, lose or tear the writes not yet
// synced (DiskFaults): a missing fsync shows only in the last two
// (TestCrashPointsMissingSync, engine.MutSkipSync). Every failure reports the
// violations and a plan file that simrun replay runs, mutant and custom
// presets included (the header's policy line carries their policies); a
// world driven by a rapid or byte source is flagged in a comment line: such
// runs replay only through their test.
//
// Canaries (TestCanaries) judge each legacy knob and each mutant of a fix by
// the fixed preset's promises: FindCounterexample runs rapid.Check on a
// recording TB and must find the expected invariant within the default
// budget. Minimised failures rapid writes under testdata/rapid/<Test>/ are
// replayed by rapid.Check first on every run; they stay valid only while
// the generator's choices are unchanged.
//
// Known limits: plans subscribe only in their prelude, because the model and
// the sim's liveness observer assume a subscription changes only when its
// SUBACK arrives (a re-subscribe whose SUBACK a crash loses gave false NoLoss
// and Order violations); connect with Clean Start is not generated.
package properties
