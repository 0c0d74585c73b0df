// Package packet is the MQTT 3.1.1 and 5.0 wire codec: all fifteen control
// packets, every v5 property and reason code.
//
// # Contract
//
// Encoding: Append(dst, v, p) appends p to dst and allocates nothing when dst
// has room. It validates what it encodes: a packet the decoder would refuse is
// not written, Append returns the *Error instead. AppendPublishValid is the
// exception a broker uses for PUBLISHes built from decoded ones: it trusts
// the topic and properties its caller vouches for and checks the rest. v5
// acknowledgements, DISCONNECT and AUTH are written in their shortest form
// (reason and property length omitted when Success / empty).
//
// Decoding: Decode takes one whole packet from the front of a buffer
// (ErrIncomplete when it holds less); DecodePublish fills a caller's *Publish
// without allocating; the stream Decoder (NewDecoder, Feed, Next) accepts
// bytes in any chunking. Decoders are strict: every malformed-packet and
// protocol-error rule of both standards that a codec can see is enforced, and
// the returned *Error names the rule ([MQTT-x.y.z-n], or §x.y.z where the
// standard has no id; in the numbering of the version decoded, 3.1.1 and 5.0
// number many rules differently) and carries the v5 reason code the engine
// must answer with. RULES.md records the audit of these ids against both
// standards' normative statements and each id it changed. An oversized
// packet's rule depends on the sender's side: a Decoder that starts with the
// version unknown reads a Client's stream, one that starts knowing it a
// Server's. An *Error unwraps to ErrMalformed (0x81), ErrTooLarge (0x95) or
// ErrProtocol (every other code), so callers can use errors.Is for the class
// and errors.As for the code. The maximum packet size is enforced from the
// fixed header, before the body is buffered, so memory stays bounded whatever
// a peer sends.
//
// Properties are written in ascending identifier order; User Properties and
// Subscription Identifiers keep their order. Equal compares packets the way a
// round trip preserves them (nil and empty slices alike).
//
// # Aliasing and lifetime
//
// Decoding does not copy byte slices: Publish.Topic, Publish.Payload,
// Will.Payload, Connect.Password, and the CorrelationData and AuthData
// properties alias the input. Strings (client id, filters, string
// properties) are copies.
//
//   - Decode and DecodePublish: the slices alias buf; they stay valid as long
//     as the caller does not overwrite buf. Copy what you keep past that.
//   - Decoder: the slices alias the decoder's internal buffer, which is
//     compacted and reused; they stay valid until the next call to Feed or
//     Next. Copy what you keep.
//   - Decoder, the packet itself: a PUBLISH, PUBACK, PUBREC, PUBREL or
//     PUBCOMP returned by Next is a value the Decoder owns (one PUBLISH, and
//     one acknowledgement the four ack types share), overwritten by a later
//     packet, so the frequent packets cost no allocation. Treat every packet from Next as valid only until
//     the next call to Feed or Next: use it, or copy the fields you keep,
//     before decoding on. Strings and lists (User Properties, Subscription
//     Identifiers, filters, reason codes) are fresh per packet and may be
//     kept. The engine's client and broker never hold a decoded packet: they
//     copy ids, topic and payload out in the handler.
//   - Decoder.Reset starts a new stream: everything returned before is
//     invalid.
//   - Decode returns a fresh packet each time (only its byte slices alias
//     buf).
//   - DecodePublish overwrites every field of p.
//
// This package imports only the standard library.
package packet
