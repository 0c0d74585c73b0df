package live

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/mqttlab/mqttlab/model"
)

// Quiet is how long the history must stay unchanged, with no delivery
// pending, for the liveness phase to call the world quiescent.
const Quiet = 500 * time.Millisecond

// runPhases runs the fault phase (workload and schedule together), heals
// everything, and runs the liveness phase. It reports whether ctx
// interrupted the run.
func (t *tester) runPhases(ctx context.Context) bool {
	all, pausable := t.clientIDs()
	kinds := t.cfg.Faults
	t.schedule = Schedule(ScheduleSpec{Seed: t.cfg.Seed, Kinds: kinds, Duration: t.cfg.Duration,
		Interval: t.cfg.FaultInterval, Clients: all, Pausable: pausable})
	t.logf("seed %d: %d faults scheduled over %v (kinds: %s)", t.cfg.Seed, len(t.schedule), t.cfg.Duration, kindList(kinds))
	for _, f := range t.schedule {
		t.logf("  %s", f)
	}
	phase, cancel := context.WithTimeout(ctx, t.cfg.Duration)
	defer cancel()
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); t.workload(phase) }()
	go func() { defer wg.Done(); t.inject(phase) }()
	wg.Wait()
	if ctx.Err() != nil {
		return true
	}
	t.healAll()
	t.rec.Add(model.Event{Kind: model.LivenessStart, Time: time.Now().UnixNano()})
	t.logf("fault phase over: %d messages issued (%d skipped while their publisher was down or busy, %d of them busy); liveness phase (bound %v)", t.issued, t.skipped, t.busy, t.cfg.Liveness)
	return t.quiesce(ctx)
}

func kindList(ks []FaultKind) string {
	if len(ks) == 0 {
		return "none"
	}
	s := make([]string, len(ks))
	for i, k := range ks {
		s[i] = string(k)
	}
	return strings.Join(s, ",")
}

// workload issues messages at the configured rate, round-robin over the
// publishers, until ctx ends or Messages were issued. It keeps the rate
// against the clock, not the ticker: a tick the loaded machine delayed or
// dropped is made up at the next, so a run issues rate x duration.
func (t *tester) workload(ctx context.Context) {
	tick := time.NewTicker(time.Second / time.Duration(t.cfg.Rate))
	defer tick.Stop()
	start := time.Now()
	n := 0
	catchUp := func(elapsed time.Duration) {
		due := int(elapsed * time.Duration(t.cfg.Rate) / time.Second)
		for ; n < due && (t.cfg.Messages == 0 || n < t.cfg.Messages); n++ {
			t.issue(n)
		}
	}
	for t.cfg.Messages == 0 || n < t.cfg.Messages {
		select {
		case <-ctx.Done():
			// What fell due before the phase ended, should the end have
			// come while this goroutine waited for a core.
			catchUp(min(time.Since(start), t.cfg.Duration))
			return
		case <-tick.C:
			catchUp(time.Since(start))
		}
	}
}

// issue hands message n to its publisher, counting it issued or skipped.
func (t *tester) issue(n int) {
	msg := fmt.Sprintf("lt%s-%d", t.nonce, n+1)
	ok, busy := true, false
	switch p := t.pubs[n%len(t.pubs)].(type) {
	case *ourClient:
		ok = p.current() != nil
		p.publish(msg)
	case *extPub:
		ok = p.publish(msg)
		busy = !ok && !p.isDown()
	case *adapterClient:
		ok = p.publish(msg)
		busy = !ok && p.current() != nil
	}
	t.mu.Lock()
	if ok {
		t.issued++
	} else {
		t.skipped++
	}
	if busy {
		t.busy++
	}
	t.mu.Unlock()
}

// inject carries out the schedule: each fault at its time, healed after
// its length (or when the phase ends). A fault whose target is still under
// an earlier fault is skipped (the log says so).
func (t *tester) inject(ctx context.Context) {
	start := time.Now()
	busy := map[string]bool{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	defer wg.Wait()
	for _, f := range t.schedule {
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Until(start.Add(f.At))):
		}
		key := f.Target
		if f.Kind == FaultSlow {
			key = "slow"
		}
		mu.Lock()
		if busy[key] {
			mu.Unlock()
			t.logf("%s: skipped, %s is under an earlier fault", f, key)
			continue
		}
		busy[key] = true
		mu.Unlock()
		wg.Add(1)
		go func(f Fault) {
			defer wg.Done()
			t.apply(ctx, f)
			mu.Lock()
			busy[key] = false
			mu.Unlock()
		}(f)
	}
}

// apply injects f, waits its length (or the end of the phase), and heals it.
func (t *tester) apply(ctx context.Context, f Fault) {
	heal := t.injectOne(f)
	if heal == nil {
		return
	}
	t.mu.Lock()
	t.applied[f.Kind]++
	t.mu.Unlock()
	select {
	case <-ctx.Done():
	case <-time.After(f.Length):
	}
	heal()
}

// injectOne starts fault f and returns what heals it (nil: nothing done).
func (t *tester) injectOne(f Fault) func() {
	match := func(id string) bool { return id == f.Target }
	switch f.Kind {
	case FaultBrokerKill:
		t.brk.kill()
		return t.brk.restart
	case FaultBrokerPause:
		p := t.brk.current()
		if p == nil {
			return nil
		}
		p.Pause()
		return p.Resume
	case FaultClientKill:
		c := t.client(f.Target)
		c.kill()
		return func() {
			if err := c.restart(); err != nil {
				t.logf("restart %s: %v", f.Target, err)
			}
		}
	case FaultClientPause:
		c := t.client(f.Target)
		c.pause()
		return c.resume
	case FaultCut:
		t.proxy.Cut(match)
		return func() {}
	case FaultBlackHole:
		now := time.Now().UnixNano()
		t.rec.Add(model.Event{Kind: model.Partition, Time: now, Node: f.Target})
		t.proxy.BlackHole(match, f.Dir)
		return func() {
			t.proxy.Cut(match)
			t.rec.Add(model.Event{Kind: model.Heal, Time: time.Now().UnixNano(), Node: f.Target})
		}
	case FaultSlow:
		t.proxy.Slow(7, 2*time.Millisecond)
		return func() { t.proxy.Slow(0, 0) }
	}
	return nil
}

// client returns the client with id, or a client that ignores faults
// (Schedule draws its targets from clientIDs, so that never happens).
func (t *tester) client(id string) client {
	for _, c := range append(append([]client(nil), t.subs...), t.pubs...) {
		if c.id() == id {
			return c
		}
	}
	return &extPub{t: t, name: id}
}

// healAll ends every fault that could still hold: the proxy forwards fast
// and cuts black-holed connections, every process runs, every client is up.
func (t *tester) healAll() {
	t.proxy.Heal()
	if t.brk != nil {
		if p := t.brk.current(); p != nil {
			p.Resume()
		}
	}
	for _, c := range append(append([]client(nil), t.subs...), t.pubs...) {
		c.resume()
		if err := c.restart(); err != nil {
			t.logf("restart %s: %v", c.id(), err)
		}
	}
}

// quiesce waits until no delivery is pending and the history stayed still
// for Quiet, recording Quiescent. At the liveness bound it records Cutoff
// when deliveries were still coming (one in the last progressWindow): the
// run is cut, unfinished, and the model judges what was still in flight as
// unfinished, not lost; else Stuck naming what is pending. It reports
// whether ctx interrupted it.
func (t *tester) quiesce(ctx context.Context) bool {
	deadline := time.Now().Add(t.cfg.Liveness)
	window := progressWindow(t.cfg.Liveness)
	lastLen, lastChange := t.rec.Len(), time.Now()
	lastDone, lastProgress := -1, time.Now()
	for {
		select {
		case <-ctx.Done():
			return true
		case <-time.After(100 * time.Millisecond):
		}
		n := t.rec.Len()
		if n != lastLen {
			lastLen, lastChange = n, time.Now()
		}
		pending, done := t.pending()
		if done != lastDone {
			lastDone, lastProgress = done, time.Now()
		}
		if len(pending) == 0 && time.Since(lastChange) >= Quiet {
			t.rec.Add(model.Event{Kind: model.Quiescent, Time: time.Now().UnixNano()})
			t.logf("quiescent")
			return false
		}
		if !time.Now().After(deadline) {
			continue
		}
		if len(pending) > 0 && time.Since(lastProgress) < window {
			reason := fmt.Sprintf("cut at the liveness bound %v while still delivering (the last delivery %v before it): %d deliveries in flight, judged unfinished: %s",
				t.cfg.Liveness, time.Since(lastProgress).Round(time.Millisecond), len(pending), shortList(pending, 5))
			t.rec.Add(model.Event{Kind: model.Cutoff, Time: time.Now().UnixNano(), Reason: reason})
			t.logf("cut: %s", reason)
			return false
		}
		reason := fmt.Sprintf("%d deliveries pending %v after the faults healed, none for %v: %s", len(pending), t.cfg.Liveness, window, shortList(pending, 5))
		if len(pending) == 0 {
			reason = fmt.Sprintf("the history still changed %v after the faults healed", t.cfg.Liveness)
		}
		t.rec.Add(model.Event{Kind: model.Stuck, Time: time.Now().UnixNano(), Reason: reason})
		t.logf("stuck: %s", reason)
		return false
	}
}

// progressWindow is how recent a delivery must be at the liveness bound
// for the run to count as still progressing (cut) rather than stuck: 2 s,
// or half the bound when that is shorter.
func progressWindow(bound time.Duration) time.Duration { return min(2*time.Second, bound/2) }

// pending lists the deliveries the model still requires: the NoLoss
// violations of the history so far, read as work to wait for (the history
// has its LivenessStart, so NoLoss judges it). It follows the model's rules
// (a clean start discards queued messages; a message counts for the
// subscriptions the broker held when it got it), so the tester waits for
// exactly what the judge will ask. done counts the deliveries recorded
// so far: progress.
func (t *tester) pending() (pending []string, done int) {
	h := t.rec.History()
	vs := model.Check(h, model.Options{Only: model.SetOf(model.NoLoss), Limits: t.cfg.Promise.Broker.Limits})
	out := make([]string, 0, len(vs))
	for _, v := range vs {
		out = append(out, v.Node+" lacks "+strings.Join(msgRE.FindAllString(v.Reason, 1), ""))
	}
	for i := range h.Events {
		if h.Events[i].Kind == model.Delivered {
			done++
		}
	}
	return out, done
}

// shortList joins the first n items and counts the rest.
func shortList(items []string, n int) string {
	if len(items) <= n {
		return strings.Join(items, ", ")
	}
	return strings.Join(items[:n], ", ") + fmt.Sprintf(" and %d more", len(items)-n)
}
