package sim

import (
	"testing"

	"github.com/mqttlab/mqttlab/engine"
	"github.com/mqttlab/mqttlab/engine/packet"
	"github.com/mqttlab/mqttlab/model"
)

// TestBrokerSessDoubt: the observer counts a session's ids owed no more
// when the broker took a Clean Start=0 CONNECT after the session may have
// expired and ended before answering it, and only then.
func TestBrokerSessDoubt(t *testing.T) {
	connect := func(clean bool, exp uint32) *cpacket {
		p := &cpacket{typ: uint8(packet.CONNECT), expiry: exp}
		if clean {
			p.flags = pktClean
		}
		return p
	}
	const s = int64(1e9)
	for _, c := range []struct {
		name    string
		version uint8
		exp     uint32
		at      int64 // the CONNECT, after the end at 10 s
		clean   bool
		answer  bool // a CONNACK answers it before the end
		want    bool
	}{
		{"expired, unanswered", 5, 5, 20 * s, false, false, true},
		{"expired, answered", 5, 5, 20 * s, false, true, false},
		{"within the interval", 5, 5, 14 * s, false, false, false},
		{"clean start", 5, 5, 20 * s, true, false, false},
		{"never expires", 5, 0xFFFFFFFF, 1000 * s, false, false, false},
		{"3.1.1", 4, 0, 1000 * s, false, false, false},
	} {
		var b brokerSess
		b.received(connect(false, c.exp), 0, c.version)
		b.connack(&cpacket{typ: uint8(packet.CONNACK)})
		b.ended(10 * s)
		b.received(connect(c.clean, c.exp), c.at, c.version)
		if c.answer {
			b.connack(&cpacket{typ: uint8(packet.CONNACK), flags: pktSessions})
		}
		if got := b.ended(c.at); got != c.want {
			t.Errorf("%s: doubt %v, want %v", c.name, got, c.want)
		}
	}
}

// TestSwarmRegressionSeeds: seeds of the campaigns that once failed under
// the default workload. The seeds' plans change as the default workload
// grows, so their failing plans, as generated and shrunk then, replay too.
// The expired-unseen ones lost the CONNACK (Session Present=0) of an
// expired v5 session in a crash: the observer and the model now count what
// the old session owed as owed no more when the broker was allowed to
// discard it.
func TestSwarmRegressionSeeds(t *testing.T) {
	for _, c := range []struct {
		seed     uint64
		plan     string // the plan that failed, from testdata
		profile  string // the campaign's fault profile ("": swarm)
		workload string // the campaign's -workload pins ("": none)
	}{
		{36011, "expired-unseen-36011.plan", "", ""}, // the subscriber crashed before reading SP=0: NoStuck on its PUBREC'd id
		{80796, "expired-unseen-80796.plan", "", ""}, // the broker crashed before sending SP=0: FlowResume and NoStuck
		// The broker learned of a half-open connection (told its end) rather
		// than closing it itself, expired the session, then crashed after
		// persisting the new one: the observer missed that end (NoStuck).
		{6724, "expired-unseen-6724.plan", "", ""},
		// A live copy (Retain As Published) and the retained copy a later
		// SUBACK owed, both RETAIN=1 at QoS 1: the resend of the live one
		// was taken for the retained one, whose first send then looked
		// like a second copy (Overlap).
		{100650, "retained-or-live-100650.plan", "", ""},
		// A client crashed part way through discarding its session for a
		// Clean Start, before its CONNECT left, and resumed the session
		// with Clean Start 0 having forgotten a QoS2 id (QoS2ExactlyOnce;
		// engine/testdata/client/clean_start_crash.txt).
		{109215, "clean-start-crash-109215.plan", "", ""},
		// A retained message's clear (an empty payload: no message id)
		// acknowledged on an id, and after a broker crash a later clear
		// sent first with DUP=1 on that freed id, in order after messages
		// the first clear preceded: taken for the first clear resent out
		// of order (Retransmit).
		{66703, "unnamed-id-reused-66703.plan", "", ""},
		{99702, "unnamed-id-reused-99702.plan", "", ""},
		// And the other reading: a clear acknowledged, the broker crashed
		// and lost the acknowledgement, resent it, then resent it again on
		// the next connection before the messages that followed it.
		{114456, "unnamed-id-acked-114456.plan", "", ""},
		// A broker crash between a SUBACK and the retained copy it owed
		// freed that copy; the SUBACK after the restart owed it again, and
		// its one send was taken for the freed one (Retained).
		{95544, "retained-owed-after-crash-95544.plan", "", ""},
		// The retained copy a later SUBACK (QoS 0) brought was taken for the
		// start of the live QoS 1 copy, which then expired unsent while the
		// subscriber was away: lost, though its expiry excused it (NoLoss).
		{49751, "retained-copy-expiry-49751.plan", "", ""},
		// Of 'simrun campaign -seeds 100000' (NoStuck, observer): s2's
		// SUBACK read after the broker took its UNSUBSCRIBE of the filter
		// (TestSubackAfterUnsubscribeStillReached), and an empty message's
		// acknowledgement after a clean start taken for another empty
		// message's (TestEmptyAckedAfterCleanStillReached).
		{28938, "suback-after-unsub-28938.plan", "", ""},
		{58348, "empty-acked-after-clean-58348.plan", "", ""},
		// Of 'simrun campaign -seeds 100000 -start 100000' (Order): s1
		// subscribed between the broker's receipts of p5's two QoS 1
		// messages, p5 crashed unacknowledged and resent both in order;
		// the first one's resend (a new publication to the broker) came
		// after the second (model TestOrderResendAfterLater).
		{176452, "resend-after-later-176452.plan", "", ""},
		// Of 'simrun campaign -seeds 100000 -start 100000' (Retained): a
		// QoS 0 retained PUBLISH and another in one delivery, the broker
		// crashed before the step's first write, so nothing was stored;
		// and a second SUBACK's QoS 0 retained copy taken for a live copy
		// (Retain As Published) the broker dropped while the subscriber
		// was away, the first SUBACK's QoS 1 copy, already sent, still
		// bounding the QoS owed.
		{147272, "retained-one-delivery-crash-147272.plan", "", ""},
		{170725, "retained-owed-again-170725.plan", "", ""},
		// Of 'simrun campaign -seeds 100000 -start 7000000' (GrantedQoS,
		// Retained) and its -start 9000000 (SharedDelivery) and crashy
		// -start 11000000 (MessageExpiry) forms: a RETAIN=1 copy a SUBACK
		// brought of a topic a broker crash left in doubt, taken for a live
		// copy owed at another QoS (model TestRetainedOrLiveReadings,
		// doubt); a SUBACK's retained copy taken for the live copy of a
		// QoS 2 resend the broker may have taken for a duplicate, which
		// need not come (obligation); the retained copy whose expiry ran
		// out taken for the live copy of a QoS 1 resend, a new publication
		// whose interval starts again (expiry); a QoS 2 message the broker
		// sent the group member it chose, which never read its SUBACK and
		// then started clean, owed to another member (model
		// TestSharedQoS2SentToUnreadMember, [MQTT-4.8.2-5]).
		// A durable client accepted a QoS 2 message before it ever
		// connected (or after a clean start), crashed and rebooted; every
		// restored record counted as sent, so its first Session Present 0
		// failed the message as the lost session's (NoLoss,
		// SharedDelivery). A record without the session marker is of a
		// message never sent (engine/testdata/client/restored_unsent.txt).
		// Of 'simrun campaign -seeds 3000 -start 434403263439 -workload
		// brokermax=on' and 'simrun campaign -seeds 20000 -start
		// 619426379774'.
		// Of the fresh range 47923235142 (d38788c): a subscription in doubt
		// after a broker crash (its SUBACK never sent) and a queue bound of
		// 4; one queued copy's Message Expiry ran out while s1 was away and
		// the broker dropped it then. The drop judge counted only copies
		// the broker later sent or dropped at a full queue, so it saw 3
		// queued copies where the broker held 4 (NoLoss, FlowResume): an
		// expired or too-large drop is a copy routed and queued until then.
		{47923314436, "queue-expired-in-doubt-47923314436.plan", "", ""},
		// Of the same range (NoStuck, engine and observer): the broker sent
		// s5 (Maximum Packet Size 449) a QoS 2 copy by topic alias (448
		// bytes) and crashed before s5's PUBREC reached it; the resend on
		// the new connection must name its topic [MQTT-3.3.2-7] (450
		// bytes), so the broker discarded it as if sent [MQTT-3.1.2-25] and
		// freed the id, while s5 held it awaiting a PUBREL that never came
		// [MQTT-4.3.3-10]. The broker now sends PUBREL in its place
		// (engine alias_out_resend_qos2.txt), and the observer owes no
		// PUBREL for a discarded resend's id (TestObserverTooLargeQoS2);
		// shrunk from 383 ops to 35.
		{47923302846, "qos2-resend-too-large-47923302846.plan", "", ""},
		// Of the swarm range 690059479149 (d38788c): g1 and g2 share
		// $share/g/t/a, both away, g2 holding 3 of p1's copies under a
		// queue bound of 4 (drop-newest); g1's clean start handed its 3 on
		// to g2, whose queue took the first and dropped the others. The
		// drop judge took each copy to have met g2's queue at the broker's
		// receipt, before p1's later copies, and found p1-3's drop at 2
		// (SharedDelivery): a copy handed on arrives at that session's end
		// (model TestSharedHandOnDrop).
		{690059481150, "shared-handon-drop-690059481150.plan", "", ""},
		// Of -workload queue=newest campaigns (NoLoss, FlowResume, model):
		// the broker recorded a drop of a queued copy for another reason
		// (its Message Expiry ran out, too large for the client) and
		// crashed before the deletion of its record was durable; the
		// restart restored the copy, which filled the queue again (bound 2,
		// 8, 7, 5) until the broker dropped it once more. The drop judge
		// let only a queue-full drop come back with a restart and counted
		// one copy fewer than the bound (model
		// TestDropLimitsRestoredAfterOtherDrop).
		{700745547048, "queue-restored-expired-700745547048.plan", "", "queue=newest"},
		{700745545770, "queue-restored-expired-700745545770.plan", "", "queue=newest"},
		{398995762671, "queue-restored-expired-398995762671.plan", "", "queue=newest"},
		{309362567057, "queue-restored-too-large-309362567057.plan", "", "queue=newest"},
		{652163940186, "queue-restored-too-large-652163940186.plan", "", "brokermax=on"},
		{652193380611, "queue-restored-too-large-652193380611.plan", "", "payload=on,aliases=on"},
		// Of the same range: a will message queued for a subscriber whose
		// clean start came between the will's CONNECT and the will's
		// publication (its connection ended much later). The drop judge
		// counted the will's copy from that CONNECT and cut it at the
		// subscriber's clean start: in 47923283829 at s7's Connected
		// (the broker had taken s7's clean CONNECT before s3's, the
		// copy joined the new session), in 47923322702 at s3's clean
		// CONNECT. It saw 4 queued copies of a bound of 4 (drop-oldest),
		// 7 of 8 (drop-newest) where the broker held the bound (NoLoss,
		// FlowResume; model TestDropLimitsLateCopies).
		{47923283829, "queue-will-in-connack-47923283829.plan", "", ""},
		{47923322702, "queue-will-after-clean-47923322702.plan", "", ""},
		{434403264475, "restored-unsent-434403264475.plan", "", ""},
		{619426392409, "restored-unsent-619426392409.plan", "", ""},
		{619426396346, "restored-unsent-619426396346.plan", "", ""},
		{7025838, "retained-in-doubt-7025838.plan", "", ""},
		{7066310, "retained-in-doubt-7066310.plan", "", ""},
		{7069088, "retained-in-doubt-7069088.plan", "", ""},
		{7034983, "retained-obligation-7034983.plan", "", ""},
		{9019658, "shared-sent-unread-9019658.plan", "", ""},
		{11005033, "retained-or-resend-expiry-11005033.plan", "crashy", ""},
		// Of 'simrun campaign -seeds 100000 -start 222758362775' (NoLoss,
		// Overlap): the broker crashed on p2's QoS 1 PUBLISH before its
		// PUBACK, s4 then re-subscribed its QoS 1 filter at QoS 0 (SUBACK
		// lost) and went, and p2's resend, acknowledged, owed s4 only a
		// QoS 0 copy, which the broker need not keep for an absent client:
		// the message was owed only through a subscription in effect at
		// every receipt that may have been its publication (model
		// TestNoLossUnackedPublish); and a live copy with RETAIN=1 (Retain
		// As Published), the retained copy of a later SUBACK and the live
		// copy of p3's resend, with RETAIN=0 once no subscription kept the
		// option: the second RETAIN=1 send was taken for a live copy, the
		// RETAIN=0 one then for a fourth (model
		// TestRetainedAsPublishedPerPublication).
		{222758374967, "unacked-publish-downgraded-222758374967.plan", "", ""},
		{222758387540, "rap-per-publication-222758387540.plan", "", ""},
		// Of 'simrun campaign -seeds 3000 -workload session=expiry'
		// (QoS2ExactlyOnce, engine): p1's QoS 2 PUBLISH reached the broker,
		// which routed it; p1 disconnected before PUBREC, its 1 s session
		// expired, and after Session Present 0 the client published the
		// message again as new, delivered a second time (engine
		// TestSessionLostFlows, mut_republish_lost_qos2.txt).
		{66, "lost-session-qos2-66.plan", "", "session=expiry"},
		// Of the same campaign (NoStuck, engine and observer): s1's QoS 1
		// copy went by topic alias alone and fitted its Maximum Packet
		// Size; its PUBACK was lost, and the resend on the new connection
		// (an empty alias table) with name and alias did not fit, so the
		// broker discarded a copy that fitted by name alone (engine
		// alias_out_resend_size.txt). And the same run with a payload two
		// bytes longer: the resend fits in no form and is discarded as if
		// delivered, its id freed [MQTT-3.1.2-25], which the liveness
		// observer now hears (World.brokerDropped).
		{1859, "alias-resend-size-1859.plan", "", "session=expiry"},
		{1859, "resend-too-large-1859.plan", "", "session=expiry"},
		// Of 'simrun campaign -seeds 3000 -workload session=expiry -start
		// 985488964' (QoS2ExactlyOnce, model): p2's 7 s session expired; it
		// read Session Present 0 and crashed before acting on it, rebooted
		// holding its sent QoS 2 message, got Session Present 1 (of the
		// session the broker started at that CONNACK) and resent it, a new
		// message to that session. No client can tell: the run's faults
		// no longer promise exactly-once (model TestFaultsSessionLostCrash).
		{985490173, "session-lost-crash-985490173.plan", "", "session=expiry"},
		// Of 'simrun campaign -seeds 100000 -start 67315247278'
		// (QoS2ExactlyOnce, model): s1 held t/+ at QoS 0 and subscribed t/+
		// at QoS 1 and t/# at QoS 2 as p2's QoS 2 retained message arrived:
		// a live QoS 0 copy, and each SUBSCRIBE's retained copy (QoS 1, QoS
		// 2); the QoS 2 one was lost to a half-open connection and both
		// were resent after Session Present 1. The QoS 1 copy's resend took
		// the second SUBSCRIBE's retained copy, so the QoS 2 copy looked
		// like a second delivery of the live one (model
		// TestInvariantQoS2ExactlyOnceRetained).
		{67315335640, "retained-qos1-resend-67315335640.plan", "", ""},
		// Since NoLoss judges every session while it lives (finite
		// expiries too), of 'simrun campaign -seeds 3000 -workload
		// session=expiry' as the model was being written (NoLoss): s5
		// replaced its QoS 1 filter t/a, then its 5 s session expired
		// while away; what the replaced subscription still owed went with
		// the session (model TestNoLossReplacedThenExpired). And p1, whose
		// first CONNECT the broker crashed on before any CONNACK, read
		// Session Present 0 much later and failed the QoS 2 message it had
		// restored from its records: the broker never accepted a session
		// of it, so it had none to keep (SessionWatch.Discards).
		{1457, "expired-after-replace-1457.plan", "", "session=expiry"},
		{2214, "never-accepted-2214.plan", "", "session=expiry"},
		// Of 'simrun campaign -seeds 3000 -workload session=expiry -start
		// 485780507742' (QoS2ExactlyOnce, model): p4's 3 s session expired;
		// the broker's Session Present 0 was on its way when p4 crashed, so
		// p4 never read it, rebooted holding its sent QoS 2 message, got
		// Session Present 1 (of the session that CONNACK started) and
		// resent it, a new message there (model TestFaultsSessionLostCrash;
		// shrunk from 372 ops to 12).
		{485780509089, "session-lost-unread-485780509089.plan", "", "session=expiry"},
		// Of 'simrun campaign -seeds 12000' (NoLoss, model): s2 (5 s
		// session) lost its connection half-open before it read its
		// SUBACK and, with no keep-alive, never noticed; the broker
		// expired the session exactly 5 s after its end of the connection,
		// and the world went quiet at that instant: the interval has run at
		// its last instant too (SessionWatch.expired; shrunk from the
		// seed's plan to 9 ops).
		{5348, "expired-at-end-5348.plan", "", ""},
		// Of 'simrun campaign -seeds 3000 -workload session=expiry -start
		// 580292192461' (NoLoss, model): p1's engine forced a Clean Start 1
		// CONNECT [MQTT-3.2.2-4] where its application had asked 0; the
		// Session Present 0 to it excused nothing, and the model dropped
		// p1-12 from the messages p1 held, though p1 sent it again in the
		// new session: the later Session Present 0, after that session
		// expired, could not excuse it. What is not excused now stays held
		// (shrunk to 66 ops).
		{580292193925, "clean-wire-580292193925.plan", "", "session=expiry"},
	} {
		profile := c.profile
		if profile == "" {
			profile = "swarm"
		}
		wl, err := DefaultWorkload().With(c.workload)
		if err != nil {
			t.Fatal(err)
		}
		r := mustRun(t, Config{Seed: c.seed, Profile: profile, Scenario: SwarmScenario, Workload: wl})
		if len(r.Violations) > 0 {
			t.Errorf("seed %d: %v\nreplay: simrun run -scenario swarm -profile %s -seed %d%s", c.seed, r.Violations, profile, c.seed, workloadFlag(wl))
		}
		cfg, plan := readPlanFile(t, c.plan)
		if r := Run(cfg, plan); r.Err != nil || len(r.Violations) > 0 {
			t.Errorf("%s: %v %v\nreplay: simrun replay sim/testdata/%s", c.plan, r.Err, r.Violations, c.plan)
		}
	}
}

// TestExpiredUnseenToldStillReached: expired-unseen-15817.plan must still
// reach the shape it guards: the broker is told of s1's half-open
// connection (its ConnClosed comes with no close of its own), takes s1's
// Clean Start=0 CONNECT after the 7 s Session Expiry Interval, crashes
// before any CONNACK, and s1 later gets Session Present 1 (of the new
// session), and the run goes quiet: the liveness observer follows that
// told end (expired-unseen-6724.plan, which failed NoStuck without it,
// no longer reaches the shape since the broker's session tombstones moved
// its timing; it stays a regression seed above).
func TestExpiredUnseenToldStillReached(t *testing.T) {
	cfg, plan := readPlanFile(t, "expired-unseen-15817.plan")
	r := Run(cfg, plan)
	if r.Err != nil || !r.Quiet || len(r.Violations) > 0 {
		t.Fatalf("err %v, quiet %v, violations %v", r.Err, r.Quiet, r.Violations)
	}
	h := r.History()
	if stage, done, why := expiredUnseenToldShape(&h, "s1", 7e9); stage != done {
		t.Fatalf("the plan no longer reaches the shape (stopped at stage %d of %d%s); re-shrink it", stage, done, why)
	}
}

// expiredUnseenToldShape follows TestExpiredUnseenToldStillReached's shape
// for client c with Session Expiry expiry (ns) through h and returns the
// stage it reached, the last stage, and why it stopped when the broker
// closed c's connection itself.
func expiredUnseenToldShape(h *model.History, c string, expiry int64) (stage, done int, why string) {
	const (
		cut     = iota // waiting for the half-open of c
		told           // ... for the broker's ConnClosed of it
		late           // ... for a CONNECT of c after the interval
		crashed        // ... for the broker's crash before a CONNACK
		resumed        // ... for c's Session Present 1
		end
	)
	at := int64(0)
	for _, e := range h.Events {
		on := e.Node == c || e.Peer == c
		switch {
		case stage == cut && e.Kind == model.Cut && e.Node == c && e.Reason == "half-open":
			stage = told
		case stage == told && on && e.Kind == model.ConnClosed && e.Node == BrokerName:
			if e.Packet.Reason == model.KeepAliveTimeout {
				return stage, end, ": the broker closed the connection itself (keep-alive)"
			}
			stage, at = late, e.Time
		case stage == late && on && e.Kind == model.Received && e.Node == BrokerName && e.Packet.Type == model.CONNECT:
			if e.Time > at+expiry && !e.Packet.Clean {
				stage = crashed
			}
		case stage == crashed && on && e.Kind == model.Sent && e.Node == BrokerName && e.Packet.Type == model.CONNACK:
			stage = late // answered: not the shape
		case stage == crashed && e.Kind == model.Crash && e.Node == BrokerName:
			stage = resumed
		case stage == resumed && e.Kind == model.Connected && e.Node == c && e.SessionPresent:
			stage = end
		}
	}
	return stage, end, ""
}

// TestSessionExpiryRestartCanary: the default campaign (DefaultWorkload,
// swarm faults) catches, within the campaign budget, a broker whose
// restart restarts every restored session's expiry clock, so that a
// session offline across a crash outlives its Session Expiry Interval: the
// model keeps the time each session went offline across broker crashes
// and SessionExpiry names it [MQTT-4.1.0-2].
func TestSessionExpiryRestartCanary(t *testing.T) {
	checkSwarmCanaries(t, []swarmCanary{{engine.MutExpiryRestart, model.SessionExpiry}})
}

// TestSessionWholeCanary: the default campaign catches, within the campaign
// budget, a broker whose session discard leaves the session's message
// records behind (no tombstone): a restart gives the discarded session's
// copies to the client id's next session, and SessionPresent names it (a
// session is whole or gone) [MQTT-3.1.2-4].
func TestSessionWholeCanary(t *testing.T) {
	checkSwarmCanaries(t, []swarmCanary{{engine.MutHalfDelete, model.SessionPresent}})
}

// TestFiniteSessionCanary: the default campaign catches, within the
// campaign budget, a broker that queues nothing for a session of a finite
// Session Expiry Interval while it is away (as if its interval were 0),
// though it keeps the session and resumes it: NoLoss judges every session
// while it lives, whatever its expiry [MQTT-4.1.0-2].
func TestFiniteSessionCanary(t *testing.T) {
	checkSwarmCanaries(t, []swarmCanary{{engine.MutFiniteSessionNoQueue, model.NoLoss}})
}
