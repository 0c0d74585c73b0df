package engine

import (
	"encoding/binary"
	"errors"
	"unsafe"

	"github.com/mqttlab/mqttlab/engine/packet"
)

// recWriter encodes a broker record value: fixed-width big-endian integers
// and length-prefixed strings.
type recWriter struct{ b []byte }

// recordRoom is room for a typical record value.
const recordRoom = 128

// record starts a record value in the free space of the broker's byte
// arena (box.go); putRecord hands it out. Nothing else may be carved from
// that arena in between (a record key is built before record is called).
func (b *Broker) record() recWriter {
	b.bytes.reserve(recordRoom)
	return recWriter{b: b.bytes.free}
}

// putRecord records a write of key with the value w wrote. The value's
// bytes are never written again (Persist.Value may be kept).
func (b *Broker) putRecord(key string, w *recWriter) { b.store.put(key, b.bytes.take(w.b)) }

func (w *recWriter) u8(v byte)    { w.b = append(w.b, v) }
func (w *recWriter) u16(v uint16) { w.b = binary.BigEndian.AppendUint16(w.b, v) }
func (w *recWriter) u32(v uint32) { w.b = binary.BigEndian.AppendUint32(w.b, v) }
func (w *recWriter) u64(v uint64) { w.b = binary.BigEndian.AppendUint64(w.b, v) }
func (w *recWriter) bytes(v []byte) {
	w.u32(uint32(len(v)))
	w.b = append(w.b, v...)
}
func (w *recWriter) str(v string) {
	w.u32(uint32(len(v)))
	w.b = append(w.b, v...)
}
func (w *recWriter) bool(v bool) {
	if v {
		w.u8(1)
	} else {
		w.u8(0)
	}
}

// msg encodes a message: topic, payload, then the forwarded v5 properties.
func (w *recWriter) msg(m *brokerMsg) {
	w.bytes(m.topic())
	w.bytes(m.payload())
	w.bool(m.expires)
	w.u32(m.interval)
	w.u64(uint64(m.expiresAt))
	if m.props == nil {
		w.u8(0)
		return
	}
	p := m.props
	w.u8(1)
	w.u64(uint64(p.Present))
	w.u8(p.PayloadFormat)
	w.str(p.ContentType)
	w.str(p.ResponseTopic)
	w.bytes(p.CorrelationData)
	w.u32(uint32(len(p.User)))
	for _, u := range p.User {
		w.str(u.Key)
		w.str(u.Value)
	}
}

// recReader decodes what recWriter wrote; the first problem sticks in err.
type recReader struct {
	b     []byte
	err   error
	arena *byteArena // where msg copies topic and payload; nil: an allocation of their own
}

var (
	errRecShort    = errors.New("value truncated")
	errRecTrailing = errors.New("trailing bytes after the value")
	errRecBool     = errors.New("flag byte is neither 0 nor 1")
	errRecTopic    = errors.New("topic longer than 65535 bytes")
)

func (r *recReader) take(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || n > len(r.b) {
		r.err = errRecShort
		return nil
	}
	v := r.b[:n:n]
	r.b = r.b[n:]
	return v
}

func (r *recReader) u8() byte {
	if v := r.take(1); v != nil {
		return v[0]
	}
	return 0
}

func (r *recReader) u16() uint16 {
	if v := r.take(2); v != nil {
		return binary.BigEndian.Uint16(v)
	}
	return 0
}

func (r *recReader) u32() uint32 {
	if v := r.take(4); v != nil {
		return binary.BigEndian.Uint32(v)
	}
	return 0
}

func (r *recReader) u64() uint64 {
	if v := r.take(8); v != nil {
		return binary.BigEndian.Uint64(v)
	}
	return 0
}

func (r *recReader) bytes() []byte { return append([]byte(nil), r.view()...) }

// view is bytes without the copy: the result aliases the record's value.
func (r *recReader) view() []byte {
	n := r.u32()
	if int64(n) > int64(len(r.b)) {
		r.err = errRecShort
		return nil
	}
	return r.take(int(n))
}

func (r *recReader) str() string { return string(r.view()) }

// strView is str without the copy: the string aliases the record's value,
// so it serves lookups and comparisons during the restore only, never
// anything kept.
func (r *recReader) strView() string {
	v := r.view()
	return unsafe.String(unsafe.SliceData(v), len(v))
}

func (r *recReader) bool() bool {
	switch r.u8() {
	case 0:
		return false
	case 1:
		return true
	}
	if r.err == nil {
		r.err = errRecBool
	}
	return false
}

// msg decodes a message written by recWriter.msg.
func (r *recReader) msg() brokerMsg {
	topic, payload := r.view(), r.view() // newBrokerMsg copies them
	if len(topic) > maxTopicLen && r.err == nil {
		r.err = errRecTopic
	}
	m := newBrokerMsg(r.arena, topic, payload, nil, false)
	m.expires, m.interval, m.expiresAt = r.bool(), r.u32(), Time(r.u64())
	if !r.bool() {
		return m
	}
	p := &packet.Properties{Present: packet.PropSet(r.u64()) & forwarded, PayloadFormat: r.u8()}
	p.ContentType, p.ResponseTopic, p.CorrelationData = r.str(), r.str(), r.bytes()
	n := r.u32()
	if int64(n) > int64(len(r.b)) {
		r.err = errRecShort
		return m
	}
	for range n {
		p.User = append(p.User, packet.UserProperty{Key: r.str(), Value: r.str()})
	}
	m.props = p
	return m
}

// done reports the first decoding problem, or trailing bytes.
func (r *recReader) done() error {
	if r.err == nil && len(r.b) > 0 {
		r.err = errRecTrailing
	}
	return r.err
}

// qosOf converts a stored QoS byte (validated by the caller).
func qosOf(v byte) packet.QoS { return packet.QoS(v) }

// packetVersion converts a stored protocol level (validated by the caller).
func packetVersion(v byte) packet.Version { return packet.Version(v) }
