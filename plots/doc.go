// Package plots runs the lab's failure-rate experiments and writes each as
// CSV, PNG and SVG.
//
// An Experiment is a named sweep: for every fault probability x in its Xs and
// every Variant (a policy preset, legacy to fixed), Trials simulated runs,
// each a TrialFunc that reports whether the run failed in the experiment's
// sense (a message lost, a session stuck, a QoS2 message delivered twice).
// Each Point of the resulting Sweep is a failure rate with its 95% Wilson
// score interval. Experiments lists the five registered experiments and
// ByName finds one.
//
// Contract:
//   - Determinism: the seed of trial i at x index j is TrialSeed(seed, name,
//     j, i), a SplitMix64 mix of the experiment seed; every variant sees the
//     same seeds (common random numbers). Trials run over worker goroutines,
//     and the Sweep does not depend on their number.
//   - Measure validates the experiment and config up front; a trial's error
//     or panic comes back as an error naming experiment, variant, x and seed,
//     so the failing run can be replayed: TrialPlan gives its plan file (a
//     simulated run that does not complete puts it in its error), whose
//     header carries the trial's custom profile and the variant's policies.
//   - WriteCSV writes the header experiment,variant,x,failures,trials,rate,
//     lo,hi; x in shortest exact form, rates with six decimals, so goldens are
//     stable. WriteChart renders png or svg with gonum.org/v1/plot: one line
//     per variant with Wilson error bars, both axes in percent, the swept
//     values evenly spaced with a tick at each, variants set side by side
//     at each value so equal series stay visible, the legend on a white box,
//     and a caption line (Caption: "95% Wilson intervals, n = N runs per
//     point", N from the data). Run does Measure then Write: NAME.csv,
//     NAME.png and NAME.svg in the output dir, and NAME.VARIANT.plan, the
//     plan file of each variant's first failing trial (Sweep.Replays, from
//     the experiment's ReplayFunc), which "simrun replay" runs again.
//
// The five experiments (ack-order, retransmit, unknown-pubrel, qos2-state,
// broker-persistence) run one sim.Run of the "standard" scenario per trial,
// with the variant's engine preset and the calm profile plus one fault:
//   - crash faults hit one node (s1, p1 or broker): its first crash point to
//     fire, each with probability x, is drawn from the trial seed and the
//     sim's exhaustive mode crashes it there, so a run has at most one crash;
//   - QoS2 state loss sets the profile's StateLossPPM to x per workload step.
//
// A trial fails when model.Check, limited to the experiment's invariants
// (NoLoss; NoStuck and PubrelAnswered; QoS2ExactlyOnce), finds a violation.
// Every variant is judged by the same invariants, promised or not.
//
// plots is not a pure package: it uses floats and goroutines. It never
// feeds either back into a simulated run.
package plots
