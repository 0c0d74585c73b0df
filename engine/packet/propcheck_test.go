package packet

import (
	"strings"
	"testing"
)

// TestPropValueChecks checks the byte and string property checks for
// every property they cover: a bad value is refused naming the property,
// a good one (or a bad value without its Present bit) passes, and with two
// bad ones the lower identifier is reported, as checking them in turn did.
func TestPropValueChecks(t *testing.T) {
	bytesOf := []PropID{PropPayloadFormat, PropRequestProblemInfo, PropRequestResponseInfo, PropMaximumQoS,
		PropRetainAvailable, PropWildcardSubAvailable, PropSubIDAvailable, PropSharedSubAvailable}
	setByte := func(p *Properties, id PropID, v byte) {
		switch id {
		case PropPayloadFormat:
			p.PayloadFormat = v
		case PropRequestProblemInfo:
			p.RequestProblemInfo = v
		case PropRequestResponseInfo:
			p.RequestResponseInfo = v
		case PropMaximumQoS:
			p.MaximumQoS = v
		case PropRetainAvailable:
			p.RetainAvailable = v
		case PropWildcardSubAvailable:
			p.WildcardSubAvail = v
		case PropSubIDAvailable:
			p.SubIDAvailable = v
		case PropSharedSubAvailable:
			p.SharedSubAvailable = v
		}
	}
	for i, id := range bytesOf {
		var p Properties
		setByte(&p, id, 2)
		if err := checkPropBytes(ctxConnack, &p); err != nil {
			t.Fatalf("%v = 2 without its Present bit refused: %v", id, err)
		}
		p.Present = p.Present.With(id)
		if err := checkPropBytes(ctxConnack, &p); err == nil || !strings.Contains(err.Error(), id.String()) {
			t.Fatalf("%v = 2: %v, want a refusal naming it", id, err)
		}
		setByte(&p, id, 1)
		if err := checkPropBytes(ctxConnack, &p); err != nil {
			t.Fatalf("%v = 1 refused: %v", id, err)
		}
		for _, later := range bytesOf[i+1:] {
			q := Properties{Present: set(id, later)}
			setByte(&q, id, 3)
			setByte(&q, later, 3)
			if err := checkPropBytes(ctxConnack, &q); err == nil || !strings.Contains(err.Error(), id.String()+" ") {
				t.Fatalf("%v and %v bad: %v, want the first, %v", id, later, err, id)
			}
		}
	}
	stringsOf := []PropID{PropContentType, PropAssignedClientID, PropAuthMethod, PropResponseInfo, PropServerReference, PropReasonString}
	setStr := func(p *Properties, id PropID, v string) {
		switch id {
		case PropContentType:
			p.ContentType = v
		case PropAssignedClientID:
			p.AssignedClientID = v
		case PropAuthMethod:
			p.AuthMethod = v
		case PropResponseInfo:
			p.ResponseInfo = v
		case PropServerReference:
			p.ServerReference = v
		case PropReasonString:
			p.ReasonString = v
		}
	}
	for i, id := range stringsOf {
		p := Properties{Present: set(id)}
		setStr(&p, id, "ok ü")
		if err := checkPropStrings(&p); err != nil {
			t.Fatalf("%v valid refused: %v", id, err)
		}
		setStr(&p, id, "bad\xff")
		if err := checkPropStrings(&p); err == nil || !strings.Contains(err.Error(), id.String()) {
			t.Fatalf("%v not UTF-8: %v, want a refusal naming it", id, err)
		}
		for _, later := range stringsOf[i+1:] {
			q := Properties{Present: set(id, later)}
			setStr(&q, id, "\x00")
			setStr(&q, later, "\x00")
			if err := checkPropStrings(&q); err == nil || !strings.Contains(err.Error(), id.String()+" ") {
				t.Fatalf("%v and %v bad: %v, want the first, %v", id, later, err, id)
			}
		}
	}
}
