package engine

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// brokerStore collects the broker's durable changes and turns them into
// Persist actions as the persistence policy says: never (LegacyPersistNone),
// before every dependent send (PersistEveryChange, each batch ending with
// Sync), or in one batch every SnapshotEvery changes (PersistPeriodic).
type brokerStore struct {
	mode    BrokerPersistence
	every   int
	pending []brokerPend   // one per key, in first-change order, each its latest change
	index   map[string]int // key -> position in pending; built only past storeScan keys
	changes int            // changes since the last periodic snapshot
}

// brokerPend is the latest pending change of one key.
type brokerPend struct {
	key string
	op  PersistOp
	val []byte
}

// storeScan is how many pending keys are searched by a plain scan before
// the store builds its index: with every-change persistence a batch holds
// a few keys, and comparing them is cheaper than hashing into a map.
const storeScan = 16

func (st *brokerStore) init(p BrokerPolicy) {
	st.mode, st.every = p.Persistence, p.SnapshotEvery
}

// enabled reports whether changes are persisted at all.
func (st *brokerStore) enabled() bool { return st.mode != LegacyPersistNone }

// put records a write of key.
func (st *brokerStore) put(key string, val []byte) { st.change(key, Put, val) }

// del records a deletion of key.
func (st *brokerStore) del(key string) { st.change(key, Delete, nil) }

// change records op on key. The change is written field by field into its
// slot (a stale one past the length is overwritten whole): no typed copy
// of the struct, whose bulk write barrier is dear while the GC marks.
func (st *brokerStore) change(key string, op PersistOp, val []byte) {
	if !st.enabled() {
		return
	}
	st.changes++
	if i := st.find(key); i >= 0 {
		p := &st.pending[i]
		p.op, p.val = op, val
		return
	}
	n := len(st.pending)
	if n < cap(st.pending) {
		st.pending = st.pending[:n+1]
	} else {
		st.pending = append(st.pending, brokerPend{})
	}
	p := &st.pending[n]
	p.key, p.op, p.val = key, op, val
	switch n++; {
	case st.index != nil:
		st.index[key] = n - 1
	case n > storeScan:
		st.index = make(map[string]int, 2*n)
		for i := range st.pending {
			st.index[st.pending[i].key] = i
		}
	}
}

// find returns the position of key's pending change, or -1.
func (st *brokerStore) find(key string) int {
	if st.index != nil {
		if i, ok := st.index[key]; ok {
			return i
		}
		return -1
	}
	for i := range st.pending {
		// Keys differ mostly in their last digits: compare those first.
		if k := st.pending[i].key; len(k) == len(key) && (len(k) == 0 || k[len(k)-1] == key[len(key)-1]) && k == key {
			return i
		}
	}
	return -1
}

// flush emits every pending change as Persist actions, the last with Sync.
// Periodic snapshots write in key order, every-change batches in change order.
func (st *brokerStore) flush(b *Broker) {
	n := len(st.pending)
	if n == 0 {
		return
	}
	if st.mode == PersistPeriodic {
		slices.SortFunc(st.pending, func(x, y brokerPend) int { return strings.Compare(x.key, y.key) })
	}
	for i := range st.pending {
		p := &st.pending[i]
		w, a := b.boxes.persist.slot()
		w.Op, w.Key, w.Value, w.Sync = p.op, p.key, p.val, i == n-1 && b.pol.Mutations&MutSkipSync == 0
		b.emit(a)
	}
	// The flushed changes are left in the array for the next batch to
	// overwrite, not cleared (a bulk clear with write barriers per batch):
	// they reference only keys and values just handed out in the Persists.
	st.pending = st.pending[:0]
	st.index = nil
}

// endStep flushes what the policy wants flushed at the end of a Step.
func (st *brokerStore) endStep(b *Broker) {
	switch st.mode {
	case PersistEveryChange:
		st.flush(b)
	case PersistPeriodic:
		if st.changes >= st.every {
			st.changes = 0
			st.flush(b)
		}
	}
}

// snapshot writes every pending change now, whatever the policy's rhythm:
// the state on disk is then the whole durable state (Shutdown).
func (st *brokerStore) snapshot(b *Broker) {
	st.changes = 0
	st.flush(b)
}

// Record keys. A client id is written length-prefixed so that no id can make
// two keys collide: "b/o/5:alice/00000000000000000042".
const (
	prefixSession  = "b/s/"
	prefixSub      = "b/u/"
	prefixOut      = "b/o/"
	prefixInbound  = "b/i/"
	prefixRetained = "b/r/"
	prefixTomb     = "b/t/"
)

// keyBuf is room for a typical key on the stack: building one costs only the
// string it becomes.
const keyBuf = 64

// appendClientKey appends prefix, the length-prefixed client id and "/".
func appendClientKey(dst []byte, prefix, id string) []byte {
	dst = strconv.AppendInt(append(dst, prefix...), int64(len(id)), 10)
	return append(append(append(dst, ':'), id...), '/')
}

// appendPadded appends v in decimal, zero-padded to width digits (fmt's
// "%0*d"), so that keys sort in numeric order.
func appendPadded(dst []byte, v uint64, width int) []byte {
	var digits [20]byte // a uint64 has at most 20 digits
	i := len(digits)
	for {
		i--
		digits[i] = byte('0' + v%10)
		v /= 10
		if v == 0 {
			break
		}
	}
	if pad := width - (len(digits) - i); pad > 0 {
		dst = append(dst, "00000000000000000000"[:min(pad, 20)]...)
		for range pad - 20 {
			dst = append(dst, '0')
		}
	}
	return append(dst, digits[i:]...)
}

func keySession(id string) string { return prefixSession + strconv.Itoa(len(id)) + ":" + id }
func keyTomb(id string) string    { return prefixTomb + strconv.Itoa(len(id)) + ":" + id }

// saveTomb writes the tombstone of a session whose discard begins now
// (dropRecords): every record of the client id with a lower sequence
// number is void.
func (b *Broker) saveTomb(id string) {
	w := b.record()
	w.u64(b.nextSeq())
	w.str(id)
	b.putRecord(keyTomb(id), &w)
}

// appendClientKeySession appends keySession(id).
func appendClientKeySession(dst []byte, id string) []byte {
	dst = strconv.AppendInt(append(dst, prefixSession...), int64(len(id)), 10)
	return append(append(dst, ':'), id...)
}
func keySub(id, filter string) string {
	var buf [keyBuf]byte
	return string(append(appendClientKey(buf[:0], prefixSub, id), filter...))
}
func keyOut(id string, seq uint64) string {
	var buf [keyBuf]byte
	return string(appendKeyOut(buf[:0], id, seq))
}
func keyIn(id string, pid uint16) string {
	var buf [keyBuf]byte
	return string(appendKeyIn(buf[:0], id, pid))
}
func appendKeyOut(dst []byte, id string, seq uint64) []byte {
	return appendPadded(appendClientKey(dst, prefixOut, id), seq, 20)
}
func appendKeyIn(dst []byte, id string, pid uint16) []byte {
	return appendPadded(appendClientKey(dst, prefixInbound, id), uint64(pid), 5)
}

// outKey is keyOut carved from the broker's byte arena (box.go): the keys of
// the records written and deleted per message cost no allocation. The
// session's key prefix is built once (recPrefixes).
func (b *Broker) outKey(s *brokerSession, seq uint64) string {
	p := b.recPrefixes(s)
	b.bytes.reserve(keyBuf)
	return b.bytes.takeString(appendPadded(append(b.bytes.free, p.out...), seq, 20))
}

// outRecKey returns the record key of s's outbound message m, built once
// and kept in m: a message is written, updated and deleted under one key.
func (b *Broker) outRecKey(s *brokerSession, m *brokerOut) string {
	if m.key == "" {
		m.key = b.outKey(s, m.seq)
	}
	return m.key
}

// inKey is keyIn carved from the broker's byte arena. The last one built
// is kept in the session: a QoS 2 id's record is written twice (pending,
// then done) and deleted under one key, usually with no other id between.
func (b *Broker) inKey(s *brokerSession, pid uint16) string {
	p := b.recPrefixes(s)
	if p.lastIn != "" && p.lastInID == pid {
		return p.lastIn
	}
	b.bytes.reserve(keyBuf)
	p.lastIn, p.lastInID = b.bytes.takeString(appendPadded(append(b.bytes.free, p.in...), uint64(pid), 5)), pid
	return p.lastIn
}

// brokerKeys are the record key prefixes of one session, "b/o/5:alice/"
// and "b/i/5:alice/" (appendClientKey), and its last inbound id key, all
// carved from the broker's byte arena.
type brokerKeys struct {
	out, in  string
	lastIn   string
	lastInID uint16
}

// recPrefixes returns s's record key prefixes, building them on first use.
func (b *Broker) recPrefixes(s *brokerSession) *brokerKeys {
	p := &s.keys
	if p.out == "" {
		b.bytes.reserve(2 * keyBuf)
		p.out = b.bytes.takeString(appendClientKey(b.bytes.free, prefixOut, s.id))
		p.in = b.bytes.takeString(appendClientKey(b.bytes.free, prefixInbound, s.id))
	}
	return p
}
func keyRetained(topic string) string      { return prefixRetained + topic }
func (b *Broker) delRetained(topic string) { b.store.del(keyRetained(topic)) }

// saveSession writes the session record of a durable session.
func (b *Broker) saveSession(s *brokerSession) {
	if !b.durable(s) {
		return
	}
	s.persisted = true
	w := b.record()
	w.u64(b.nextSeq())
	w.str(s.id)
	w.u8(byte(s.version))
	w.u32(s.expiry)
	w.u64(uint64(s.offlineAt))
	w.bool(s.will != nil)
	if s.will != nil {
		w.u8(byte(s.will.qos))
		w.bool(s.will.retain)
		w.u32(s.will.delay)
		w.msg(&s.will.msg)
	}
	b.putRecord(keySession(s.id), &w)
}

// saveSub writes one subscription of a durable session.
func (b *Broker) saveSub(s *brokerSession, filter string, o subOptions) {
	if !b.durable(s) {
		return
	}
	w := b.record()
	w.u64(b.nextSeq())
	w.str(s.id)
	w.str(filter)
	w.u8(byte(o.QoS))
	w.bool(o.NoLocal)
	w.bool(o.RetainAsPublished)
	w.u8(o.RetainHandling)
	if o.SubID != 0 {
		w.u32(o.SubID) // absent in records of subscriptions without one
	}
	b.putRecord(keySub(s.id, filter), &w)
}

// delSub deletes one subscription record.
func (b *Broker) delSub(s *brokerSession, filter string) {
	if s.persisted {
		b.store.del(keySub(s.id, filter))
	}
}

// saveOut writes one outbound message of a durable session: its sequence
// number (the order), packet id (0 while queued), QoS, flags and message.
func (b *Broker) saveOut(s *brokerSession, m *brokerOut) {
	if !b.durable(s) {
		return
	}
	key := b.outRecKey(s, m) // before the record: both are carved from b.bytes
	w := b.record()
	w.u64(m.seq)
	w.str(s.id)
	w.u16(m.id)
	w.u8(byte(m.qos))
	w.bool(m.retain)
	w.bool(m.pubrel)
	w.msg(&m.msg)
	w.u64(m.msg.originSeq)
	if k := b.shareKeyOf(m); k != "" {
		w.str(k) // absent in the records of ordinary copies
		if m.from != 0 {
			w.u64(m.from) // absent unless handOn made the copy
		}
	}
	b.putRecord(key, &w)
}

// delOut deletes one outbound message record.
func (b *Broker) delOut(s *brokerSession, m *brokerOut) {
	if s.persisted {
		b.store.del(b.outRecKey(s, m))
	}
}

// saveInbound writes an inbound QoS 2 id awaiting PUBREL; with a message it
// is marked pending: the message's fanout may not be stored yet.
func (b *Broker) saveInbound(s *brokerSession, id uint16, seq uint64, pending *brokerMsg, retain bool) {
	if !b.durable(s) {
		return
	}
	if seq == 0 {
		seq = b.nextSeq()
	}
	key := b.inKey(s, id) // before the record: both are carved from b.bytes
	w := b.record()
	w.u64(seq)
	w.str(s.id)
	w.u16(id)
	w.bool(pending != nil)
	if pending != nil {
		w.bool(retain)
		w.msg(pending)
	}
	b.putRecord(key, &w)
}

// brokerPendingIn is a restored inbound QoS 2 message whose fanout may be
// incomplete.
type brokerPendingIn struct {
	client string
	id     uint16
	msg    brokerMsg
	retain bool
}

// delInbound deletes an inbound QoS 2 id record.
func (b *Broker) delInbound(s *brokerSession, id uint16) {
	if s.persisted {
		b.store.del(b.inKey(s, id))
	}
}

// saveRetained writes a retained message.
func (b *Broker) saveRetained(topic string, r *brokerRetained) {
	if !b.store.enabled() || b.pol.Mutations&MutVolatileRetained != 0 {
		return // the canary keeps retained messages in memory only
	}
	w := b.record()
	w.u64(r.seq)
	w.u8(byte(r.qos))
	w.msg(&r.msg)
	b.putRecord(keyRetained(topic), &w)
}

// restore rebuilds the broker from durable records, in key order. Sessions
// come back offline; outbound messages are ordered by sequence number.
func (b *Broker) restore(records []Record) error {
	recs := slices.Clone(records)
	slices.SortFunc(recs, func(x, y Record) int { return strings.Compare(x.Key, y.Key) })
	if err := b.restoreTombs(recs); err != nil {
		return err
	}
	var subs, outs, ins []Record
	for _, r := range recs {
		var err error
		switch {
		case strings.HasPrefix(r.Key, prefixTomb):
		case strings.HasPrefix(r.Key, prefixSession):
			err = b.restoreSession(r)
		case strings.HasPrefix(r.Key, prefixSub):
			subs = append(subs, r)
		case strings.HasPrefix(r.Key, prefixOut):
			outs = append(outs, r)
		case strings.HasPrefix(r.Key, prefixInbound):
			ins = append(ins, r)
		case strings.HasPrefix(r.Key, prefixRetained):
			err = b.restoreRetained(r)
		default:
			err = fmt.Errorf("%w %q: unknown key prefix", ErrBrokerRecord, r.Key)
		}
		if err != nil {
			return err
		}
	}
	for _, step := range []struct {
		recs []Record
		fn   func(Record) error
	}{{subs, b.restoreSub}, {outs, b.restoreOut}, {ins, b.restoreInbound}} {
		for _, r := range step.recs {
			if err := step.fn(r); err != nil {
				return err
			}
		}
	}
	b.dropHandedOn()
	for _, s := range b.sessions {
		slices.SortFunc(s.inflight, func(x, y brokerOut) int { return cmpU64(x.seq, y.seq) })
		slices.SortFunc(s.queue, func(x, y brokerOut) int { return cmpU64(x.seq, y.seq) })
		if n := len(s.inflight); n > 0 {
			s.ids.SetLast(s.inflight[n-1].id)
		}
	}
	b.tombAt = nil
	b.restored = len(b.sessions) > 0 || len(b.orphans) > 0 || len(b.tombs) > 0 // pendingIn belong to sessions
	return nil
}

func cmpU64(x, y uint64) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

// corrupt builds the error for a record that does not decode.
func corrupt(key string, why string) error {
	return fmt.Errorf("%w %q: %s", ErrBrokerRecord, key, why)
}

// seen keeps the sequence counter above every restored sequence number.
func (b *Broker) seen(seq uint64) { b.seq = max(b.seq, seq) }

// restoreTombs reads the tombstones of recs (in key order) first: the
// discards a crash interrupted (dropRecords). Each voids the records of its
// client id older than it, whatever part of the deletions the crash kept;
// the session a clean start made after it (newer records) stays.
func (b *Broker) restoreTombs(recs []Record) error {
	lo, _ := slices.BinarySearchFunc(recs, prefixTomb, func(r Record, k string) int { return strings.Compare(r.Key, k) })
	for _, r := range recs[lo:] {
		if !strings.HasPrefix(r.Key, prefixTomb) {
			break
		}
		rd := recReader{b: r.Value}
		seq, id := rd.u64(), rd.str()
		if err := rd.done(); err != nil {
			return corrupt(r.Key, err.Error())
		}
		if r.Key != keyTomb(id) || seq == 0 {
			return corrupt(r.Key, "tombstone does not match its key")
		}
		b.seen(seq)
		if b.tombAt == nil {
			b.tombAt = map[string]uint64{}
		}
		b.tombAt[id] = seq
		b.tombs = append(b.tombs, r.Key)
	}
	return nil
}

// void reports whether a restored record of client id with sequence number
// seq predates a tombstone of id: part of a discarded session.
func (b *Broker) void(id string, seq uint64) bool {
	t, ok := b.tombAt[id]
	return ok && seq < t
}

func (b *Broker) restoreSession(r Record) error {
	rd := recReader{b: r.Value, arena: &b.bytes}
	seq, id, ver, exp, off := rd.u64(), rd.str(), rd.u8(), rd.u32(), int64(rd.u64())
	var will *brokerWill
	if rd.bool() {
		will = &brokerWill{qos: qosOf(rd.u8()), retain: rd.bool(), delay: rd.u32()}
		will.msg = rd.msg()
	}
	if err := rd.done(); err != nil {
		return corrupt(r.Key, err.Error())
	}
	if kb := [keyBuf]byte{}; r.Key != string(appendClientKeySession(kb[:0], id)) {
		return corrupt(r.Key, "client id "+strconv.Quote(id)+" does not match the key")
	}
	if ver != 4 && ver != 5 {
		return corrupt(r.Key, "protocol version "+strconv.Itoa(int(ver)))
	}
	if will != nil && (will.qos > 2 || !validTopicName(will.msg.topic())) {
		return corrupt(r.Key, "invalid will")
	}
	b.seen(seq)
	if b.void(id, seq) {
		b.orphans = append(b.orphans, r.Key) // an interrupted discard's: the session is gone
		return nil
	}
	s := b.newSession(id)
	s.version, s.expiry, s.offlineAt, s.persisted, s.will = packetVersion(ver), exp, Time(off), true, will
	return nil
}

func (b *Broker) restoreSub(r Record) error {
	rd := recReader{b: r.Value}
	seq, id, filter := rd.u64(), rd.strView(), rd.str()
	o := subOptions{QoS: qosOf(rd.u8()), NoLocal: rd.bool(), RetainAsPublished: rd.bool(), RetainHandling: rd.u8()}
	if len(rd.b) > 0 {
		o.SubID = rd.u32()
	}
	if err := rd.done(); err != nil {
		return corrupt(r.Key, err.Error())
	}
	var kb [keyBuf]byte
	if r.Key != string(append(appendClientKey(kb[:0], prefixSub, id), filter...)) || !validFilter(filter) || o.QoS > 2 {
		return corrupt(r.Key, "subscription does not match its key or is invalid")
	}
	b.seen(seq)
	s := b.sessions[id]
	if s == nil || b.void(id, seq) {
		b.orphans = append(b.orphans, r.Key) // its session record was lost: the subscription went with it
		return nil
	}
	s.setSub(filter, o)
	if sharedSub(s, filter) {
		b.shareAdd(filter, s, o)
		return nil
	}
	b.tree.add(filter, s, o)
	return nil
}

func (b *Broker) restoreOut(r Record) error {
	rd := recReader{b: r.Value, arena: &b.bytes}
	var m brokerOut
	var id string
	m.seq, id, m.id, m.qos, m.retain, m.pubrel = rd.u64(), rd.strView(), rd.u16(), qosOf(rd.u8()), rd.bool(), rd.bool()
	m.msg = rd.msg()
	m.msg.originSeq = rd.u64()
	if len(rd.b) > 0 {
		if k := rd.str(); isShared(k) {
			m.share = b.shareGroup(k).id
		}
		if len(rd.b) > 0 {
			m.from = rd.u64()
		}
	}
	if err := rd.done(); err != nil {
		return corrupt(r.Key, err.Error())
	}
	var kb [keyBuf]byte
	if r.Key != string(appendKeyOut(kb[:0], id, m.seq)) || m.qos == 0 || m.qos > 2 || (m.pubrel && (m.qos != 2 || m.id == 0)) {
		return corrupt(r.Key, "message does not match its key or is invalid")
	}
	b.seen(m.seq)
	s := b.sessions[id]
	if s == nil || b.void(id, m.seq) {
		b.orphans = append(b.orphans, r.Key)
		return nil
	}
	m.key = r.Key
	if m.id == 0 {
		s.queue = append(s.queue, m)
		return nil
	}
	if err := s.ids.Claim(m.id); err != nil {
		return corrupt(r.Key, err.Error())
	}
	m.sent = true
	s.pushInflight(m)
	return nil
}

func (b *Broker) restoreInbound(r Record) error {
	rd := recReader{b: r.Value, arena: &b.bytes}
	seq, id, pid := rd.u64(), rd.strView(), rd.u16()
	var p *brokerPendingIn
	if rd.bool() {
		p = &brokerPendingIn{client: strings.Clone(id), id: pid, retain: rd.bool(), msg: rd.msg()}
		p.msg.originSeq = seq
	}
	if err := rd.done(); err != nil {
		return corrupt(r.Key, err.Error())
	}
	var kb [keyBuf]byte
	if r.Key != string(appendKeyIn(kb[:0], id, pid)) || pid == 0 || (p != nil && !validTopicName(p.msg.topic())) {
		return corrupt(r.Key, "inbound id does not match its key")
	}
	b.seen(seq)
	s := b.sessions[id]
	if s == nil || b.void(id, seq) {
		b.orphans = append(b.orphans, r.Key)
		return nil
	}
	s.inbound.put(pid, 0) // no connection owes it
	if p != nil {
		b.pendingIn = append(b.pendingIn, *p)
	}
	return nil
}

func (b *Broker) restoreRetained(r Record) error {
	rd := recReader{b: r.Value, arena: &b.bytes}
	ret := &brokerRetained{seq: rd.u64(), qos: qosOf(rd.u8())}
	ret.msg = rd.msg()
	if err := rd.done(); err != nil {
		return corrupt(r.Key, err.Error())
	}
	if r.Key != keyRetained(string(ret.msg.topic())) || ret.qos > 2 || len(ret.msg.payload()) == 0 {
		return corrupt(r.Key, "retained message does not match its key or is invalid")
	}
	b.seen(ret.seq)
	b.retained[string(ret.msg.topic())] = ret
	return nil
}
