package engine

import (
	"maps"
	"slices"
	"strings"
	"testing"
)

// TestClientShutdown: a connected client answers Shutdown with DISCONNECT
// 0x00 and a close, and nothing else (no record written, no command
// completed: its durable state was written when it changed); an unacked
// QoS 1 message stays in the durable store for the next incarnation. A
// client that is not connected does nothing.
func TestClientShutdown(t *testing.T) {
	h := connected(t, fixedConfig(t), false)
	h.step(Publish{Cmd: 1, Topic: "t", Payload: []byte("p"), QoS: 1})
	before := maps.Clone(h.store)
	got := h.summarize(h.step(Shutdown{}))
	var rest []string
	for _, s := range got {
		if !strings.HasPrefix(s, "cancel ") { // its timers die with it anyway
			rest = append(rest, s)
		}
	}
	if len(rest) != 2 || !strings.HasPrefix(rest[0], "send DISCONNECT") || strings.Contains(rest[0], "rc=") || !strings.HasPrefix(rest[1], "close") {
		t.Fatalf("Shutdown gave %q, want a DISCONNECT 0x00 and a close", got)
	}
	if !maps.EqualFunc(before, h.store, slices.Equal) {
		t.Fatalf("Shutdown changed the durable store: %v -> %v", before, h.store)
	}
	if h.c.Connected() {
		t.Fatal("still connected after Shutdown")
	}
	if again := h.step(Shutdown{}); len(again) != 0 {
		t.Fatalf("a second Shutdown gave %q, want nothing", h.summarize(again))
	}
	h.reboot()
	if got := h.reconnect(true); indexOf(got, "send PUBLISH q=1 id=1 dup=1") < 0 {
		t.Fatalf("the unacked message was not resent after the stop: %q", got)
	}
}
