// The live tester's adapter for MQTT.js (the npm package mqtt, v5): one
// client for the whole life of the process, speaking the long-running
// subject protocol of docs/live.md (commands on stdin, events on stdout,
// one JSON object a line).
//
// The client keeps its session in MQTT.js's default stores, in memory (the
// dir of the connect command goes unused), connects with the given Clean
// Session flag and reconnects by itself (reconnectPeriod). It reports a
// message accepted once publish() returned (the library holds it), published
// at publish's callback (PUBACK or PUBCOMP), delivered at the 'message'
// event.
'use strict'

const readline = require('readline')
const mqtt = require('mqtt')

function emit (ev) {
  ev.time = Date.now() * 1000
  process.stdout.write(JSON.stringify(ev) + '\n')
}

let client = null

function connect (c) {
  client = mqtt.connect({
    host: c.host || '127.0.0.1',
    port: c.port,
    clientId: c.id,
    clean: !!c.clean,
    protocolVersion: 4,
    keepalive: c.keepalive || 60,
    reconnectPeriod: 200,
    connectTimeout: 5000
  })
  client.on('connect', (connack) => emit({ event: 'connected', session_present: !!connack.sessionPresent }))
  client.on('close', () => emit({ event: 'connection_lost', error: 'closed' }))
  client.on('error', (err) => emit({ event: 'error', error: String(err && err.message) }))
  client.on('message', (topic, payload, packet) =>
    emit({ event: 'delivered', msg: payload.toString(), qos: packet.qos, dup: !!packet.dup }))
}

function subscribe (c) {
  client.subscribe(c.topic, { qos: c.qos }, (err, granted) => {
    if (err) {
      emit({ event: 'error', error: 'subscribe: ' + err.message })
      return
    }
    emit({ event: 'subscribed', topic: c.topic, qos: granted && granted[0] ? granted[0].qos : null })
  })
}

function publish (c) {
  client.publish(c.topic, c.msg, { qos: c.qos }, (err) => {
    if (err) {
      emit({ event: 'error', msg: c.msg, error: 'publish: ' + err.message })
      return
    }
    emit({ event: 'published', msg: c.msg })
  })
  emit({ event: 'accepted', msg: c.msg }) // held in the library's memory (queued when offline)
}

const rl = readline.createInterface({ input: process.stdin })
rl.on('line', (line) => {
  let c
  try {
    c = JSON.parse(line)
  } catch (e) {
    emit({ event: 'error', error: 'bad command: ' + e.message })
    return
  }
  if (c.cmd !== 'connect' && c.cmd !== 'exit' && client === null) {
    emit({ event: 'error', msg: c.msg, error: c.cmd + ' before connect' })
    return
  }
  switch (c.cmd) {
    case 'connect': connect(c); break
    case 'subscribe': subscribe(c); break
    case 'publish': publish(c); break
    case 'disconnect': client.end(); break
    case 'exit': process.exit(0); break
    default: emit({ event: 'error', error: 'unknown command ' + c.cmd })
  }
})
rl.on('close', () => process.exit(0))
