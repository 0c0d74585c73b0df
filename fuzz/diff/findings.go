package diff

import (
	"regexp"

	"github.com/mqttlab/mqttlab/engine/packet"
)

// Finding is a disagreement between the codecs decided, from the standard's
// text, against the peer. docs/findings.md lists each with its bytes.
type Finding struct {
	ID      string // F1, F2, ...
	Section string // the MQTT 5.0 section the peer breaks
	Text    string // what each side does
	Example string // an input, hex, that shows it (TestFindings replays it)
}

// Findings are the peer's known bugs. Each is allowed for by the
// comparisons below, and TestFindings proves each is still real.
var Findings = []Finding{
	{ID: "F1", Section: "§1.5.4, §2.2.2.2",
		Text:    "an empty UTF-8 string property (Content Type, Response Topic, Assigned Client Identifier, Authentication Method, Response Information, Server Reference, Reason String) is read as absent: the peer keeps strings without a presence flag, so it loses the property and never re-encodes it",
		Example: "20 06 00 00 03 1f 00 00"},
	{ID: "F2", Section: "§3.14.2.1",
		Text:    "a DISCONNECT with Remaining Length 0 (Normal disconnection, no properties: the form the standard allows) is refused with EOF",
		Example: "e0 00"},
	{ID: "F3", Section: "§3.3.2.3.8",
		Text:    "a PUBLISH with several Subscription Identifiers (one per matching subscription, as the standard has the server send them) keeps only the last: the peer's Properties hold one *int",
		Example: "30 09 00 01 74 04 0b 01 0b 02 78"},
	{ID: "F4", Section: "§1.5.6, §2.2.2.2",
		Text:    "an empty Binary Data property (Correlation Data, Authentication Data) is read, but the peer's encoder drops it: a packet it forwards loses the property",
		Example: "32 09 00 01 74 00 01 03 09 00 00"},
}

// emptyString matches an empty string property in a canonical form.
var emptyString = regexp.MustCompile(` (will\.)?p(3|8|18|21|26|28|31)=""`)

// SameReading reports whether the peer's reading pc of a packet is the one
// engine/packet read (oc), once the known findings of the peer are allowed
// for.
func SameReading(oc, pc string) bool {
	if oc == pc {
		return true
	}
	oc = emptyString.ReplaceAllString(oc, "") // F1
	oc = lastSubID(oc)                        // F3
	return oc == pc
}

// subID matches a Subscription Identifier in a canonical form.
var subID = regexp.MustCompile(` p11=[0-9]+`)

// lastSubID drops every Subscription Identifier of a canonical form but the
// last (F3).
func lastSubID(c string) string {
	all := subID.FindAllStringIndex(c, -1)
	for i := len(all) - 2; i >= 0; i-- {
		c = c[:all[i][0]] + c[all[i][1]:]
	}
	return c
}

// emptyBinary matches an empty binary property in a canonical form.
var emptyBinary = regexp.MustCompile(` (will\.)?p(9|22)=""`)

// SameReencoded reports whether engine/packet's reading c2 of the peer's
// re-encoding of a packet is the packet engine/packet first read (oc), once
// the known findings of the peer (its encoder's included) are allowed for.
func SameReencoded(oc, c2 string) bool {
	return SameReading(emptyBinary.ReplaceAllString(oc, ""), c2) // F4
}

// KnownPeerRefusal returns the known finding that makes the peer refuse a
// packet engine/packet accepts (raw is its encoding), or "".
func KnownPeerRefusal(p packet.Packet, raw []byte) string {
	if p.Type() == packet.DISCONNECT && len(raw) == 2 {
		return "F2"
	}
	return ""
}

// KnownPeerEncoding names the known finding that makes the peer's encoding
// of a packet invalid, or returns "".
func KnownPeerEncoding(enc []byte, err error) string {
	return ""
}
