// Package packet is the MQTT 3.1.1 and 5.0 wire codec: all fifteen control
// packets, every v5 property and reason code.
//
// Contract. Encoders append to a caller's buffer (Append) and allocate nothing
// when it has room. Decoders are strict: every malformed-packet and
// protocol-error rule of both standards that a codec can see is enforced, and
// the returned *Error names the rule ([MQTT-x.y.z-n]) and carries the v5
// reason code the engine must answer with. The stream Decoder accepts bytes in
// any chunking and enforces the maximum packet size from the fixed header,
// before the body is buffered, so memory stays bounded whatever a peer sends.
//
// Lifetime rule. A decoded PUBLISH does not copy: its Topic, Payload and
// byte-slice properties alias the input. With the stream Decoder they stay
// valid until the next call to Feed or Next; copy what you keep.
//
// This package imports only the standard library.
package packet
