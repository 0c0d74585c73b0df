package main

import (
	"strings"
	"testing"

	"github.com/mqttlab/mqttlab/model"
)

// TestViolationTextExplainedBy: a violation the model explains by an
// earlier one says so on its text line and in the JSON summary; the cause
// says nothing.
func TestViolationTextExplainedBy(t *testing.T) {
	vs := violationsJSON([]model.Violation{
		{Step: 12, Invariant: model.SessionPresent, Node: model.BrokerNode, Reason: "kept", Events: []int{12}},
		{Step: 3, Invariant: model.NoLoss, Node: "s1", Reason: "lost", Events: []int{3}, ExplainedBy: "SessionPresent at step 12"},
	})
	if got := vs[0].text(); strings.Contains(got, "explained") {
		t.Errorf("cause's line %q says explained", got)
	}
	if got, want := vs[1].text(), "NoLoss at step 3 on s1: lost (explained by SessionPresent at step 12)"; got != want {
		t.Errorf("text %q, want %q", got, want)
	}
	if vs[1].ExplainedBy != "SessionPresent at step 12" {
		t.Errorf("JSON explained_by %q", vs[1].ExplainedBy)
	}
}
