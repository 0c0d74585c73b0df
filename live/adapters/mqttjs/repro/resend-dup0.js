// Reproduces, without fault injection, the finding of
// docs/analyses/mqttjs.md: MQTT.js (the npm package mqtt 5.16.0, as
// live/adapters/mqttjs/package-lock.json pins it) with clean: false resends
// an unacknowledged QoS 2 PUBLISH on reconnection with DUP=0, where MQTT
// 3.1.1 §3.3.1.1 says "The DUP flag MUST be set to 1 by the Client or
// Server when it attempts to re-deliver a PUBLISH Packet" [MQTT-3.3.1-1].
//
// The cause: _onConnect (build/lib/client.js) reads each stored packet from
// the outgoing store and hands it to _sendPacket unchanged; nothing sets
// its dup flag.
//
// A scripted broker on a loopback port answers CONNECT, reads the client's
// QoS 2 PUBLISH without acknowledging it and closes the connection; on the
// client's reconnection it answers Session Present 1 and reads the resent
// PUBLISH. Exit status 1: the resend had DUP=0 (the finding holds); 0:
// DUP=1; 3: the client did not get that far.
//
//   node live/adapters/mqttjs/repro/resend-dup0.js   (after npm ci in live/adapters/mqttjs)
'use strict'
const net = require('net')
const path = require('path')
const mqtt = require(path.join(__dirname, '..', 'node_modules', 'mqtt'))

// packets splits a byte stream into MQTT packets: [first byte, body].
function reader (sock, onPacket) {
  let buf = Buffer.alloc(0)
  sock.on('data', (d) => {
    buf = Buffer.concat([buf, d])
    for (;;) {
      if (buf.length < 2) return
      let n = 0; let mul = 1; let i = 1
      for (;;) {
        if (i >= buf.length) return
        const b = buf[i++]
        n += (b & 127) * mul
        mul *= 128
        if ((b & 128) === 0) break
      }
      if (buf.length < i + n) return
      onPacket(buf[0], buf.subarray(i, i + n))
      buf = buf.subarray(i + n)
    }
  })
}

function done (code, msg) {
  console.log(msg)
  process.exit(code)
}

let conn = 0
const server = net.createServer((sock) => {
  conn++
  const mine = conn
  reader(sock, (head, body) => {
    const type = head >> 4
    if (type === 1) { // CONNECT
      sock.write(Buffer.from([0x20, 2, mine === 1 ? 0 : 1, 0])) // CONNACK
      return
    }
    if (type !== 3) return
    const tlen = body.readUInt16BE(0)
    const id = body.readUInt16BE(2 + tlen)
    const dup = (head >> 3) & 1
    if (mine === 1) {
      console.log(`connection 1: client sent PUBLISH id ${id} QoS 2 DUP=${dup}; the broker acknowledges nothing and closes the connection`)
      sock.destroy()
      return
    }
    if (dup === 0) {
      done(1, `connection 2: client resent PUBLISH id ${id} with DUP=0 after a Session Present 1 CONNACK: a re-delivery must carry DUP=1 [MQTT-3.3.1-1]`)
    }
    done(0, `connection 2: client resent PUBLISH id ${id} with DUP=1`)
  })
})
server.listen(0, '127.0.0.1', () => {
  const port = server.address().port
  const c = mqtt.connect({ host: '127.0.0.1', port, clientId: 'repro-dup', clean: false, protocolVersion: 4, reconnectPeriod: 100, keepalive: 30 })
  c.once('connect', () => c.publish('repro/topic', 'm1', { qos: 2 }))
  c.on('error', () => {})
})
setTimeout(() => done(3, 'the client did not reconnect within 10 s'), 10000)
