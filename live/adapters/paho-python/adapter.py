"""The live tester's adapter for Eclipse Paho Python (paho-mqtt 1.6, as
Debian's python3-paho-mqtt ships it): one client for the whole life of the
process, speaking the long-running subject protocol of docs/live.md (commands
on stdin, events on stdout, one JSON object a line).

The client keeps its session where the library keeps it, in memory
(client.py: "we don't have (on disk) persistence for the session"); the dir
of the connect command goes unused. It connects with the given Clean Session
flag and reconnects by itself (loop_start's network thread). It reports a
message accepted once publish() returned a message id (the library holds it
in memory, queued if not connected), published at on_publish (PUBACK or
PUBCOMP), delivered at on_message.
"""

import json
import sys
import threading
import time

import paho.mqtt.client as mqtt

out_lock = threading.Lock()


def emit(**ev):
    ev["time"] = time.time_ns() // 1000
    line = json.dumps(ev)
    with out_lock:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


class Adapter:
    def __init__(self):
        self.client = None
        self.mu = threading.Lock()
        self.by_mid = {}  # publish mid -> message id, until on_publish
        self.early = set()  # mids whose on_publish came before publish() returned
        self.sub_topic = {}
        self.subs = []  # (topic, qos) to subscribe at every connection

    def connect(self, c):
        cl = mqtt.Client(client_id=c["id"], clean_session=c.get("clean", False), protocol=mqtt.MQTTv311)
        cl.on_connect = self.on_connect
        cl.on_disconnect = lambda _c, _u, rc: emit(event="connection_lost", error="rc %d" % rc)
        cl.on_message = lambda _c, _u, m: emit(event="delivered", msg=m.payload.decode("utf-8", "replace"), qos=m.qos, dup=bool(m.dup))
        cl.on_publish = self.on_publish
        cl.on_subscribe = lambda _c, _u, mid, granted: emit(event="subscribed", topic=self.sub_topic.get(mid, ""), qos=granted[0])
        cl.reconnect_delay_set(min_delay=0.2, max_delay=1)
        cl.connect_async(c.get("host", "127.0.0.1"), c["port"], keepalive=c.get("keepalive", 60))
        cl.loop_start()
        self.client = cl

    def on_connect(self, _c, _u, flags, rc):
        emit(event="connected", rc=rc, session_present=bool(flags.get("session present")))
        if rc == 0:
            # subscribe() does not queue while disconnected: the library's
            # examples subscribe in on_connect, so that a reconnection renews
            # the subscriptions.
            for topic, qos in list(self.subs):
                self.send_subscribe(topic, qos)

    def on_publish(self, _c, _u, mid):
        with self.mu:
            msg = self.by_mid.pop(mid, None)
            if msg is None:
                self.early.add(mid)
                return
        emit(event="published", msg=msg)

    def subscribe(self, c):
        self.subs.append((c["topic"], c["qos"]))
        if self.client.is_connected():
            self.send_subscribe(c["topic"], c["qos"])

    def send_subscribe(self, topic, qos):
        rc, mid = self.client.subscribe(topic, qos)
        if rc != mqtt.MQTT_ERR_SUCCESS:
            emit(event="error", error="subscribe: %s" % mqtt.error_string(rc))
            return
        self.sub_topic[mid] = topic

    def publish(self, c):
        msg = c["msg"]
        info = self.client.publish(c["topic"], msg, qos=c["qos"])
        if info.rc not in (mqtt.MQTT_ERR_SUCCESS, mqtt.MQTT_ERR_NO_CONN):
            emit(event="error", msg=msg, error="publish: %s" % mqtt.error_string(info.rc))
            return
        emit(event="accepted", msg=msg)  # held in memory (queued when not connected)
        with self.mu:
            if info.mid in self.early:
                self.early.discard(info.mid)
                done = True
            else:
                self.by_mid[info.mid] = msg
                done = False
        if done:
            emit(event="published", msg=msg)


def main():
    a = Adapter()
    for raw in sys.stdin:
        try:
            c = json.loads(raw)
        except ValueError as e:
            emit(event="error", error="bad command: %s" % e)
            continue
        cmd = c.get("cmd")
        if cmd == "connect":
            a.connect(c)
        elif a.client is None and cmd in ("subscribe", "publish"):
            emit(event="error", msg=c.get("msg", ""), error="%s before connect" % cmd)
        elif cmd == "subscribe":
            a.subscribe(c)
        elif cmd == "publish":
            a.publish(c)
        elif cmd == "disconnect":
            a.client.disconnect()
        elif cmd == "exit":
            break
        else:
            emit(event="error", error="unknown command %r" % cmd)
    if a.client is not None:
        a.client.loop_stop()


if __name__ == "__main__":
    main()
