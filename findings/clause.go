package findings

import (
	"regexp"
	"slices"
	"strings"
)

// Version 3.1.1's and 5.0's protocol levels, as model.Event.Version holds
// them on Connected events.
const (
	V311 uint8 = 4
	V5   uint8 = 5
)

// counterpart is one normative statement as the model cites it, with its
// number in each version. V311 is "" when 3.1.1 has no numbered
// counterpart; Note says why (or where 3.1.1 says it without a number).
type counterpart struct {
	V5, V311, Note string
}

// clauses maps each normative id the model's violation reasons cite to its
// MQTT 5.0 and MQTT 3.1.1 numbers. The 3.1.1 numbers are from the OASIS
// MQTT 3.1.1 standard's Appendix B (29 October 2014), the 5.0 ones from the
// OASIS MQTT 5.0 standard. Most ids the model cites are 5.0's; a few
// reasons cite 3.1.1's own (keep-alive, packet ids), which the table maps
// back to 5.0 as well, so that each run reads in its own version.
var clauses = map[string]counterpart{
	"MQTT-2.2.1-3":  {"MQTT-2.2.1-3", "MQTT-2.3.1-2", ""},
	"MQTT-2.2.1-4":  {"MQTT-2.2.1-4", "MQTT-2.3.1-4", ""},
	"MQTT-2.3.1-1":  {"MQTT-2.2.1-3", "MQTT-2.3.1-1", ""}, // cited as 3.1.1's: a non-zero packet id
	"MQTT-2.3.1-2":  {"MQTT-2.2.1-3", "MQTT-2.3.1-2", ""},
	"MQTT-2.3.1-4":  {"MQTT-2.2.1-4", "MQTT-2.3.1-4", ""},
	"MQTT-3.1.2-4":  {"MQTT-3.1.2-4", "MQTT-3.1.2-6", ""},
	"MQTT-3.1.2-5":  {"MQTT-3.1.2-5", "MQTT-3.1.2-4", ""},
	"MQTT-3.1.2-8":  {"MQTT-3.1.2-8", "MQTT-3.1.2-8", ""},
	"MQTT-3.1.2-10": {"MQTT-3.1.2-10", "MQTT-3.1.2-10", ""},
	"MQTT-3.1.2-20": {"MQTT-3.1.2-20", "MQTT-3.1.2-23", ""},
	"MQTT-3.1.2-22": {"MQTT-3.1.2-22", "MQTT-3.1.2-24", ""},
	// The model's keep-alive reasons cite 3.1.1's numbers: the client's
	// PINGREQ duty and the server's 1.5 x Keep Alive.
	"MQTT-3.1.2-23": {"MQTT-3.1.2-20", "MQTT-3.1.2-23", ""},
	"MQTT-3.1.2-24": {"MQTT-3.1.2-22", "MQTT-3.1.2-24", ""},
	"MQTT-3.1.2-25": {"MQTT-3.1.2-25", "", "3.1.1 has no Maximum Packet Size"},
	"MQTT-3.1.2-26": {"MQTT-3.1.2-26", "", "3.1.1 has no Topic Alias"},
	"MQTT-3.1.2-27": {"MQTT-3.1.2-27", "", "3.1.1 has no Topic Alias"},
	"MQTT-3.1.3-9":  {"MQTT-3.1.3-9", "", "3.1.1 has no Will Delay Interval"},
	"MQTT-3.1.4-3":  {"MQTT-3.1.4-3", "MQTT-3.1.4-2", ""},
	"MQTT-3.2.0-1":  {"MQTT-3.2.0-1", "MQTT-3.2.0-1", ""},
	"MQTT-3.2.2-2":  {"MQTT-3.2.2-2", "MQTT-3.2.2-1", ""},
	"MQTT-3.2.2-3":  {"MQTT-3.2.2-3", "MQTT-3.2.2-2", ""},
	"MQTT-3.2.2-4":  {"MQTT-3.2.2-4", "", "3.1.1 states the client's duty in §3.2.2.2 without a number"},
	"MQTT-3.2.2-5":  {"MQTT-3.2.2-5", "", "3.1.1 states the client's duty in §3.2.2.2 without a number"},
	"MQTT-3.2.2-15": {"MQTT-3.2.2-15", "", "3.1.1 has no Maximum Packet Size"},
	"MQTT-3.2.2-21": {"MQTT-3.2.2-21", "", "3.1.1 has no Server Keep Alive"},
	"MQTT-3.3.1-1":  {"MQTT-3.3.1-1", "MQTT-3.3.1-1", ""},
	"MQTT-3.3.1-5":  {"MQTT-3.3.1-5", "MQTT-3.3.1-5", ""},
	"MQTT-3.3.1-6":  {"MQTT-3.3.1-6", "MQTT-3.3.1-10", ""},
	"MQTT-3.3.1-9":  {"MQTT-3.3.1-9", "MQTT-3.3.1-6", ""},
	"MQTT-3.3.1-10": {"MQTT-3.3.1-10", "", "3.1.1 has no Retain Handling: every SUBSCRIBE brings the retained messages (MQTT-3.8.4-3)"},
	"MQTT-3.3.1-11": {"MQTT-3.3.1-11", "", "3.1.1 has no Retain Handling"},
	"MQTT-3.3.1-12": {"MQTT-3.3.1-12", "MQTT-3.3.1-9", ""},
	"MQTT-3.3.2-5":  {"MQTT-3.3.2-5", "", "3.1.1 has no Message Expiry Interval"},
	"MQTT-3.3.2-6":  {"MQTT-3.3.2-6", "", "3.1.1 has no Message Expiry Interval"},
	"MQTT-3.3.2-7":  {"MQTT-3.3.2-7", "", "3.1.1 has no Topic Alias"},
	"MQTT-3.3.2-11": {"MQTT-3.3.2-11", "", "3.1.1 has no Topic Alias"},
	"MQTT-3.3.4-2":  {"MQTT-3.3.4-2", "MQTT-3.3.5-1", ""},
	"MQTT-3.3.4-3":  {"MQTT-3.3.4-3", "", "3.1.1 has no Subscription Identifiers"},
	"MQTT-3.3.4-4":  {"MQTT-3.3.4-4", "", "3.1.1 has no Subscription Identifiers"},
	"MQTT-3.3.4-5":  {"MQTT-3.3.4-5", "", "3.1.1 has no Subscription Identifiers"},
	"MQTT-3.3.4-7":  {"MQTT-3.3.4-7", "", "3.1.1 has no Receive Maximum"},
	"MQTT-3.3.4-9":  {"MQTT-3.3.4-9", "", "3.1.1 has no Receive Maximum"},
	"MQTT-3.8.4-3":  {"MQTT-3.8.4-3", "MQTT-3.8.4-3", ""},
	"MQTT-3.8.4-8":  {"MQTT-3.8.4-8", "MQTT-3.8.4-6", ""},
	"MQTT-3.10.4-1": {"MQTT-3.10.4-1", "MQTT-3.10.4-1", ""},
	"MQTT-3.10.4-2": {"MQTT-3.10.4-2", "MQTT-3.10.4-2", ""},
	"MQTT-3.10.4-3": {"MQTT-3.10.4-3", "MQTT-3.10.4-3", ""},
	"MQTT-3.14.4-3": {"MQTT-3.14.4-3", "MQTT-3.14.4-3", ""},
	"MQTT-4.1.0-2":  {"MQTT-4.1.0-2", "", "3.1.1 has no Session Expiry Interval"},
	"MQTT-4.3.2-4":  {"MQTT-4.3.2-4", "MQTT-4.3.2-2", ""},
	"MQTT-4.3.2-5":  {"MQTT-4.3.2-5", "MQTT-4.3.2-2", ""},
	"MQTT-4.3.3-1":  {"MQTT-4.3.3-1", "MQTT-4.3.3-1", ""},
	"MQTT-4.3.3-4":  {"MQTT-4.3.3-4", "MQTT-4.3.3-1", ""},
	"MQTT-4.3.3-6":  {"MQTT-4.3.3-6", "MQTT-4.3.3-1", ""},
	"MQTT-4.3.3-8":  {"MQTT-4.3.3-8", "MQTT-4.3.3-2", ""},
	"MQTT-4.3.3-10": {"MQTT-4.3.3-10", "MQTT-4.3.3-2", ""},
	"MQTT-4.3.3-11": {"MQTT-4.3.3-11", "MQTT-4.3.3-2", ""},
	"MQTT-4.4.0-1":  {"MQTT-4.4.0-1", "MQTT-4.4.0-1", ""},
	"MQTT-4.5.0-1":  {"MQTT-4.5.0-1", "MQTT-4.5.0-1", ""},
	"MQTT-4.6.0-1":  {"MQTT-4.6.0-1", "MQTT-4.6.0-1", ""},
	"MQTT-4.6.0-5":  {"MQTT-4.6.0-5", "MQTT-4.6.0-6", ""},
	"MQTT-4.6.0-6":  {"MQTT-4.6.0-6", "MQTT-4.6.0-5", ""},
	"MQTT-4.7.1-1":  {"MQTT-4.7.1-1", "MQTT-4.7.1-1", ""},
	"MQTT-4.7.1-2":  {"MQTT-4.7.1-2", "MQTT-4.7.1-2", ""},
	"MQTT-4.7.2-1":  {"MQTT-4.7.2-1", "MQTT-4.7.2-1", ""},
	"MQTT-4.8.2-5":  {"MQTT-4.8.2-5", "", "3.1.1 has no shared subscriptions"},
	"MQTT-4.9.0-1":  {"MQTT-4.9.0-1", "", "3.1.1 has no flow control"},
	"MQTT-4.9.0-2":  {"MQTT-4.9.0-2", "", "3.1.1 has no flow control"},
}

// idRE finds a cited normative id; annotRE a reason's own note of the
// 3.1.1 number, "(3.1.1 [MQTT-x])" or "v3.1.1 [MQTT-x]".
var (
	idRE    = regexp.MustCompile(`\[(MQTT-[0-9]+\.[0-9]+\.[0-9]+-[0-9]+)\]`)
	annotRE = regexp.MustCompile(`\(?v?3\.1\.1 ((?:\[MQTT-[0-9.]+-[0-9]+\] ?)+)\)?`)
)

// VersionName names a protocol level: "3.1.1" or "5.0".
func VersionName(v uint8) string {
	if v == V311 {
		return "3.1.1"
	}
	return "5.0"
}

// Clauses returns the normative statements a violation's reason cites, in
// the numbering of protocol version v (V311 or V5), in order, without
// repeats. A 5.0 statement 3.1.1 lacks reads "MQTT-x (5.0; 3.1.1: none,
// why)" in a 3.1.1 run.
func Clauses(reason string, v uint8) []string {
	var out []string
	for _, id := range idRE.FindAllStringSubmatch(stripNotes(reason), -1) {
		c := inVersion(id[1], v)
		if !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out
}

// stripNotes drops a reason's own notes of the 3.1.1 numbers ("(3.1.1
// [MQTT-x])", "v3.1.1 [MQTT-x]"): the table gives them, in either version.
func stripNotes(reason string) string {
	return strings.ReplaceAll(annotRE.ReplaceAllString(reason, ""), " ]", "]")
}

// inVersion is one cited id in version v's numbering.
func inVersion(id string, v uint8) string {
	c, ok := clauses[id]
	if !ok {
		return id
	}
	if v != V311 {
		return c.V5
	}
	if c.V311 == "" {
		return c.V5 + " (5.0; 3.1.1: none, " + c.Note + ")"
	}
	return c.V311
}

// Reword returns reason with its cited ids in version v's numbering: in a
// 3.1.1 run each 5.0 id becomes its 3.1.1 counterpart or says there is
// none; the reason's own notes of 3.1.1 numbers go, the table giving them.
func Reword(reason string, v uint8) string {
	return idRE.ReplaceAllStringFunc(stripNotes(reason), func(m string) string {
		return "[" + inVersion(m[1:len(m)-1], v) + "]"
	})
}
