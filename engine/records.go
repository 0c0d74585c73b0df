package engine

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	"github.com/mqttlab/mqttlab/engine/packet"
)

// The client's durable records. Keys of the two packet-id directions never
// collide: "out/<id>" holds an outgoing message (the client's ids),
// "in/<id>" an incoming QoS2 id awaiting PUBREL (the broker's ids). Ids are
// zero-padded to five digits so keys sort by id. "session" marks that the
// client holds a session: it is stored at the CONNACK, before any "in/"
// record, and deleted first by a clean start, so "in/" records without it
// are a clean start a crash interrupted, which the restored client finishes
// (its next CONNECT has Clean Start 1) [MQTT-3.1.2-4]. Order never comes from keys or map order: every
// message record carries an explicit sequence number.
//
// Values (a kind byte, then clientUvarints):
//
//	out/<id>  clientRecPublish|clientRecPubrel, seq, relSeq, cmd, PUBLISH bytes with DUP=1
//	in/<id>   clientRecIn, seq
//	session   clientRecSession
const (
	clientKeySession = "session"
	clientPrefixOut  = "out/"
	clientPrefixIn   = "in/"
)

// Record kinds, the first byte of a value.
const (
	clientRecPublish byte = iota + 1 // awaiting PUBACK/PUBREC: resend the PUBLISH
	clientRecPubrel                  // awaiting PUBCOMP: resend the PUBREL
	clientRecIn                      // incoming QoS2 id awaiting PUBREL
	clientRecSession                 // the session marker
)

// clientOutKey is the record key of an outgoing message.
func clientOutKey(id uint16) string {
	if id < clientKeyTabled {
		return clientTabledKey(clientKeyTableOut, len(clientPrefixOut)+5, id)
	}
	return clientRecordKeyBuilt(clientPrefixOut, id)
}

// clientInKey is the record key of an incoming QoS2 id.
func clientInKey(id uint16) string {
	if id < clientKeyTabled {
		return clientTabledKey(clientKeyTableIn, len(clientPrefixIn)+5, id)
	}
	return clientRecordKeyBuilt(clientPrefixIn, id)
}

// clientTabledKey is key id of a key table whose keys are n bytes long.
func clientTabledKey(table string, n int, id uint16) string {
	return table[int(id)*n : int(id+1)*n]
}

// clientKeyTabled ids (below it) have their out/ and in/ keys precomputed:
// ids are handed out lowest-free-after-last, so a run's ids are mostly small.
const clientKeyTabled = 1024

// clientKeyTable holds the keys of ids 0..clientKeyTabled-1 of each prefix,
// back to back in one string (built once, read-only): a key of a small id
// is a substring of it, no allocation.
var (
	clientKeyTableOut = clientKeyTable(clientPrefixOut)
	clientKeyTableIn  = clientKeyTable(clientPrefixIn)
)

// clientKeyTable builds the table of prefix: key i is at i*(len(prefix)+5).
func clientKeyTable(prefix string) string {
	var sb strings.Builder
	sb.Grow(clientKeyTabled * (len(prefix) + 5))
	for id := range clientKeyTabled {
		sb.WriteString(clientRecordKeyBuilt(prefix, uint16(id)))
	}
	return sb.String()
}

// clientRecordKey is prefix and the id zero-padded to five digits: a slice
// of the precomputed table for a small id of a known prefix, else built with
// a single allocation.
func clientRecordKey(prefix string, id uint16) string {
	if id < clientKeyTabled {
		n := len(prefix) + 5
		switch prefix {
		case clientPrefixOut:
			return clientKeyTableOut[int(id)*n : int(id+1)*n]
		case clientPrefixIn:
			return clientKeyTableIn[int(id)*n : int(id+1)*n]
		}
	}
	return clientRecordKeyBuilt(prefix, id)
}

// clientRecordKeyBuilt is clientRecordKey built with a single allocation.
func clientRecordKeyBuilt(prefix string, id uint16) string {
	var b [16]byte
	n := copy(b[:], prefix)
	for i := n + 4; i >= n; i-- {
		b[i] = '0' + byte(id%10)
		id /= 10
	}
	return string(b[:n+5])
}

// clientParseID parses the five-digit id of a key.
func clientParseID(s string) (uint16, bool) {
	if len(s) != 5 {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > 65535 || s[0] == '+' || s[0] == '-' {
		return 0, false
	}
	return uint16(n), true
}

// clientAppendOut appends the record of an outgoing message to dst; the
// PUBLISH is stored with DUP set, since any send after a restore is a resend.
func clientAppendOut(dst []byte, m *clientOutMsg) []byte {
	kind := clientRecPublish
	if m.state == coReleased {
		kind = clientRecPubrel
	}
	b := append(dst, kind)
	b = binary.AppendUvarint(b, m.seq)
	b = binary.AppendUvarint(b, m.relSeq)
	b = binary.AppendUvarint(b, uint64(m.cmd))
	start := len(b)
	b = append(b, m.wire...)
	b[start] |= clientDupFlag
	return b
}

// clientAppendIn appends the record of an incoming QoS2 id's sequence
// number to dst.
func clientAppendIn(dst []byte, seq uint64) []byte {
	return binary.AppendUvarint(append(dst, clientRecIn), seq)
}

// clientEncodeSession encodes the session marker.
func clientEncodeSession() []byte { return []byte{clientRecSession} }

// clientUvarints reads len(out) uvarints from the front of b into out.
func clientUvarints(b []byte, out []uint64) ([]byte, bool) {
	for i := range out {
		v, k := binary.Uvarint(b)
		if k <= 0 {
			return nil, false
		}
		out[i], b = v, b[k:]
	}
	return b, true
}

// clientDecodeOut rebuilds an outgoing message from its record.
func clientDecodeOut(v packet.Version, id uint16, val []byte) (*clientOutMsg, error) {
	if len(val) == 0 || (val[0] != clientRecPublish && val[0] != clientRecPubrel) {
		return nil, fmt.Errorf("not an outgoing-message record")
	}
	var nums [3]uint64
	rest, ok := clientUvarints(val[1:], nums[:])
	if !ok || len(rest) == 0 {
		return nil, fmt.Errorf("truncated")
	}
	m := &clientOutMsg{id: id, seq: nums[0], relSeq: nums[1], cmd: CmdID(nums[2]), state: coPublished, sent: true}
	if val[0] == clientRecPubrel {
		m.state = coReleased
	}
	m.wire = slices.Clone(rest)
	m.wire[0] &^= clientDupFlag
	n, err := packet.DecodePublish(v, m.wire, &m.pkt)
	switch {
	case err != nil:
		return nil, fmt.Errorf("stored PUBLISH: %w", err)
	case n != len(m.wire):
		return nil, fmt.Errorf("%d bytes after the stored PUBLISH", len(m.wire)-n)
	case m.pkt.QoS == 0 || m.pkt.PacketID != id:
		return nil, fmt.Errorf("stored PUBLISH has QoS %d and id %d", m.pkt.QoS, m.pkt.PacketID)
	case m.state == coReleased && m.pkt.QoS != 2:
		return nil, fmt.Errorf("PUBREL record of a QoS %d message", m.pkt.QoS)
	case m.seq == 0:
		return nil, fmt.Errorf("sequence number 0")
	}
	m.pkt.Dup = false
	return m, nil
}

// clientDecodeIn returns an incoming QoS2 record's sequence number.
func clientDecodeIn(val []byte) (uint64, error) {
	if len(val) == 0 || val[0] != clientRecIn {
		return 0, fmt.Errorf("not an incoming-QoS2 record")
	}
	var nums [1]uint64
	rest, ok := clientUvarints(val[1:], nums[:])
	if !ok || len(rest) != 0 || nums[0] == 0 {
		return 0, fmt.Errorf("bad sequence number")
	}
	return nums[0], nil
}

// restore rebuilds the client's state from durable records, in key order
// so that errors are deterministic. Messages go back in sequence order.
func (c *Client) restore(recs []Record) error {
	recs = slices.Clone(recs)
	slices.SortFunc(recs, func(a, b Record) int { return strings.Compare(a.Key, b.Key) })
	for _, r := range recs {
		if err := c.restoreOne(r); err != nil {
			return fmt.Errorf("%w: record %q: %w", ErrClientRecord, r.Key, err)
		}
	}
	o := &c.out
	slices.SortFunc(o.order, func(a, b *clientOutMsg) int { return cmpSeq(a.seq, b.seq) })
	for _, m := range o.order {
		o.nextSeq = max(o.nextSeq, m.seq+1)
		o.nextRel = max(o.nextRel, m.relSeq+1)
		o.ids.SetLast(m.id)
	}
	for _, id := range c.in.awaitingRel.ids() {
		seq, _ := c.in.awaitingRel.get(id)
		c.in.nextSeq = max(c.in.nextSeq, seq+1)
	}
	if !c.marker {
		// No PUBLISH leaves before the marker is stored (at the CONNACK),
		// and a clean start deletes a sent message's record before the
		// marker (discardSession): every record without a marker is of a
		// message never sent, which a Session Present 0 must not fail as
		// if the lost session had it [MQTT-3.2.2-5] (v5 §4.1: a message
		// not yet sent is not session state).
		for _, m := range o.order {
			if m.state == coPublished {
				m.sent = false
			}
		}
	}
	c.hasSession = c.marker || c.hasState()
	if !c.marker && c.in.awaitingRel.len() > 0 {
		// A clean start a crash interrupted (discardSession): finish it.
		c.forceClean = true
	}
	return nil
}

// restoreOne restores one record.
func (c *Client) restoreOne(r Record) error {
	switch {
	case r.Key == clientKeySession:
		if len(r.Value) != 1 || r.Value[0] != clientRecSession {
			return fmt.Errorf("not a session marker")
		}
		c.marker = true
	case strings.HasPrefix(r.Key, clientPrefixOut):
		id, ok := clientParseID(r.Key[len(clientPrefixOut):])
		if !ok {
			return fmt.Errorf("bad packet id in key")
		}
		m, err := clientDecodeOut(c.v, id, r.Value)
		if err != nil {
			return err
		}
		if err := c.out.ids.Claim(id); err != nil {
			return err
		}
		c.out.add(m)
	case strings.HasPrefix(r.Key, clientPrefixIn):
		id, ok := clientParseID(r.Key[len(clientPrefixIn):])
		if !ok {
			return fmt.Errorf("bad packet id in key")
		}
		seq, err := clientDecodeIn(r.Value)
		if err != nil {
			return err
		}
		c.in.awaitingRel.put(id, seq)
	default:
		return fmt.Errorf("unknown key")
	}
	return nil
}

// A client deletes the record of a small packet id with the same Persist
// every time: Delete, synced, of a key that is a slice of its key table.
// Since a boxed action is never written again (box.go), one read-only value
// per prefix and id serves every client, from every goroutine, instead of a
// fresh one per delete. Built once at package initialisation.
var (
	clientDeletesOut = clientDeleteTable(clientKeyTableOut, len(clientPrefixOut)+5)
	clientDeletesIn  = clientDeleteTable(clientKeyTableIn, len(clientPrefixIn)+5)
)

// clientDeleteTable boxes the synced Delete of each key of table (keys of n
// bytes each).
func clientDeleteTable(table string, n int) []Action {
	ps := make([]Persist, clientKeyTabled)
	as := make([]Action, clientKeyTabled)
	for i := range ps {
		ps[i] = Persist{Op: Delete, Key: table[i*n : (i+1)*n], Sync: true}
		as[i] = boxShared(&ps[i])
	}
	return as
}

// clientSharedDelete returns the shared synced Delete of key when key is a
// slice of a key table (clientRecordKey of a small id), else nil.
func clientSharedDelete(key string) Action {
	if a := sharedDeleteIn(key, clientKeyTableOut, len(clientPrefixOut)+5, clientDeletesOut); a != nil {
		return a
	}
	return sharedDeleteIn(key, clientKeyTableIn, len(clientPrefixIn)+5, clientDeletesIn)
}

// sharedDeleteIn returns the action of deletes for key when key is one of
// the n-byte keys of table, else nil.
func sharedDeleteIn(key, table string, n int, deletes []Action) Action {
	if len(key) != n {
		return nil
	}
	off := uintptr(unsafe.Pointer(unsafe.StringData(key))) - uintptr(unsafe.Pointer(unsafe.StringData(table)))
	if off >= uintptr(len(table)) || off%uintptr(n) != 0 {
		return nil
	}
	return deletes[off/uintptr(n)]
}
