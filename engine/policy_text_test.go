package engine

import (
	"errors"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// TestPolicyTextNames pins every policy value's text name: plan files hold
// them, so they must never change.
func TestPolicyTextNames(t *testing.T) {
	cases := []struct {
		got, want string
	}{
		{LegacyRetransmitNone.String(), "none"}, {RetransmitMemory.String(), "memory"}, {RetransmitDurable.String(), "durable"},
		{LegacyUnknownAckFail.String(), "fail"}, {UnknownAckAnswer.String(), "answer"},
		{LegacyAckBeforeCallback.String(), "before-callback"}, {AckAfterCallback.String(), "after-callback"},
		{LegacyQoS2Volatile.String(), "volatile"}, {QoS2Durable.String(), "durable"},
		{LegacyPersistNone.String(), "none"}, {PersistPeriodic.String(), "periodic"}, {PersistEveryChange.String(), "every-change"},
		{Mutation(0).String(), "none"},
		{MutDeleteBeforeUpdate.String(), "delete-before-update"},
		{MutResendWithoutDup.String(), "resend-without-dup"},
		{MutReuseInflightID.String(), "reuse-inflight-id"},
		{MutPublishAfterPubrel.String(), "publish-after-pubrel"},
		{MutAckBeforePersist.String(), "ack-before-persist"},
		{MutIgnoreReceiveMax.String(), "ignore-receive-max"},
		{MutIgnoreGrantedQoS.String(), "ignore-granted-qos"},
		{MutCopyPerSubscription.String(), "copy-per-subscription"},
		{MutKeepUnsubscribed.String(), "keep-unsubscribed"},
		{MutRetainEmptyPayload.String(), "retain-empty-payload"},
		{MutExpiryUnchanged.String(), "expiry-unchanged"},
		{MutPacketIDZero.String(), "packet-id-zero"},
		{MutKeepAliveOnReceive.String(), "keep-alive-on-receive"},
		{MutAliasAboveMax.String(), "alias-above-max"},
		{MutNoPumpOnAck.String(), "no-pump-on-ack"},
		{MutSessionPresentZero.String(), "session-present-zero"},
		{MutKeepAliveNoReset.String(), "keep-alive-no-reset"},
		{MutSkipSync.String(), "skip-sync"},
		{(MutResendWithoutDup | MutAckBeforePersist | 1<<40).String(), "resend-without-dup+ack-before-persist+0x10000000000"},
		{MutIgnoreSessionExpiry.String(), "ignore-session-expiry"},
		{MutSubIDsFirstOnly.String(), "subids-first-only"},
		{MutWillOnNormalDisconnect.String(), "will-on-normal-disconnect"},
		{MutVolatileRetained.String(), "volatile-retained"},
		{MutMaxSizeEstimate.String(), "max-size-estimate"},
		{MutWillDropOnDisconnect.String(), "will-drop-on-disconnect"},
		{MutIgnoreMaxSize.String(), "ignore-max-size"},
		{MutExhaustedReuse.String(), "exhausted-reuse"},
		{MutDollarWildcard.String(), "dollar-wildcard"},
		{MutQueueBelowBound.String(), "queue-below-bound"},
		{MutIgnoreServerKeepAlive.String(), "ignore-server-keep-alive"},
		{MutFiniteSessionNoQueue.String(), "finite-session-no-queue"},
		{MutACLWildcardSubscribe.String(), "acl-wildcard-subscribe"},
		{RetransmitStore(0).String(), "retransmit(0)"},
		{UnknownAck(9).String(), "unknown-ack(9)"},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("text name %q, want %q", c.got, c.want)
		}
	}
	if MutACLWildcardSubscribe != 1<<(len(mutationNames)-1) {
		t.Errorf("mutationNames has %d names; the last mutation is %#x", len(mutationNames), uint64(MutACLWildcardSubscribe))
	}
}

// TestPolicyTextRoundTrip: every value (and any mutation set) parses back
// from its text name.
func TestPolicyTextRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		rs := RetransmitStore(rapid.IntRange(1, 3).Draw(t, "retransmit"))
		ua := UnknownAck(rapid.IntRange(1, 2).Draw(t, "unknown"))
		ao := AckOrder(rapid.IntRange(1, 2).Draw(t, "order"))
		qs := QoS2State(rapid.IntRange(1, 2).Draw(t, "qos2"))
		bp := BrokerPersistence(rapid.IntRange(1, 3).Draw(t, "persistence"))
		m := Mutation(rapid.Uint64().Draw(t, "mutations"))
		check := func(what string, same bool, err error) {
			if err != nil || !same {
				t.Fatalf("%s does not round-trip: %v", what, err)
			}
		}
		r2, err := ParseRetransmitStore(rs.String())
		check(rs.String(), r2 == rs, err)
		u2, err := ParseUnknownAck(ua.String())
		check(ua.String(), u2 == ua, err)
		a2, err := ParseAckOrder(ao.String())
		check(ao.String(), a2 == ao, err)
		q2, err := ParseQoS2State(qs.String())
		check(qs.String(), q2 == qs, err)
		b2, err := ParseBrokerPersistence(bp.String())
		check(bp.String(), b2 == bp, err)
		m2, err := ParseMutation(m.String())
		check(m.String(), m2 == m, err)
	})
}

// TestPolicyTextBad: bad names are refused with ErrPolicyText, naming the
// bad text.
func TestPolicyTextBad(t *testing.T) {
	cases := []struct {
		name  string
		parse func(string) error
		text  string
	}{
		{"retransmit", func(s string) error { _, err := ParseRetransmitStore(s); return err }, "disk"},
		{"retransmit unset", func(s string) error { _, err := ParseRetransmitStore(s); return err }, ""},
		{"unknown ack", func(s string) error { _, err := ParseUnknownAck(s); return err }, "ignore"},
		{"ack order", func(s string) error { _, err := ParseAckOrder(s); return err }, "after"},
		{"qos2", func(s string) error { _, err := ParseQoS2State(s); return err }, "memory"},
		{"persistence", func(s string) error { _, err := ParseBrokerPersistence(s); return err }, "always"},
		{"mutation name", func(s string) error { _, err := ParseMutation(s); return err }, "resend-without-dup+oops"},
		{"mutation empty part", func(s string) error { _, err := ParseMutation(s); return err }, "resend-without-dup+"},
		{"mutation zero hex", func(s string) error { _, err := ParseMutation(s); return err }, "0x0"},
		{"mutation bad hex", func(s string) error { _, err := ParseMutation(s); return err }, "0xzz"},
		{"mutation empty", func(s string) error { _, err := ParseMutation(s); return err }, ""},
	}
	for _, c := range cases {
		err := c.parse(c.text)
		if !errors.Is(err, ErrPolicyText) || (c.text != "" && !strings.Contains(err.Error(), c.text)) {
			t.Errorf("%s %q: error %v, want ErrPolicyText naming the text", c.name, c.text, err)
		}
	}
}
