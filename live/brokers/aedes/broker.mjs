// Aedes, an MQTT 3.1 and 3.1.1 broker (MQTT 5.0 is not supported: it
// answers a 5.0 CONNECT with CONNACK return code 1), listening on
// 127.0.0.1 at the port given as the first argument, with its in-memory
// persistence. The live tester's tests start it as a real broker that
// speaks only 3.1.1 (see docs/live.md, "When a subject does not start").
import { createServer } from 'node:net'
import { Aedes } from 'aedes'

const port = Number(process.argv[2])
if (!Number.isInteger(port) || port <= 0) {
  console.error('usage: broker.mjs PORT')
  process.exit(2)
}
const aedes = await Aedes.createBroker()
const server = createServer(aedes.handle)
server.on('error', (err) => {
  console.error(`aedes: ${err.message}`)
  process.exit(1)
})
aedes.on('connectionError', (client, err) => {
  console.error(`aedes: client ${client && client.id}: ${err.message}`)
})
server.listen(port, '127.0.0.1', () => {
  console.error(`aedes listening on 127.0.0.1:${port}`)
})
