"""Reproduces, without fault injection, the finding of
docs/analyses/paho-python.md: Eclipse Paho Python (Debian's
python3-paho-mqtt 1.6.1; upstream master has the same code) resends a QoS 2
PUBLISH, with DUP=0, after it has sent that message's PUBREL, when two
connection attempts follow each other without a CONNACK in between. MQTT
3.1.1 §4.3.3: the sender "MUST NOT re-send the PUBLISH once it has sent the
corresponding PUBREL Packet" and "MUST treat the PUBREL Packet as
'unacknowledged' until it has received the corresponding PUBCOMP"
[MQTT-4.3.3-1]; §4.4: on reconnection it re-sends "any unacknowledged
PUBLISH Packets (where QoS > 0) and PUBREL Packets" [MQTT-4.4.0-1].

The cause, client.py, _messages_reconnect_reset_out (run by every
reconnect()): a message waiting for its PUBCOMP becomes
mqtt_ms_resend_pubrel, to be resent at the next CONNACK; but a message
already in mqtt_ms_resend_pubrel (its CONNACK never came) falls into the
else branch and becomes mqtt_ms_publish, so the next CONNACK sends the
PUBLISH again, with its original DUP=0.

A scripted broker on a loopback port plays the three connections:
  1. CONNACK; the client publishes at QoS 2; PUBREC; the client's PUBREL;
     the broker closes the connection before its PUBCOMP;
  2. the client's CONNECT is not answered; the broker closes it;
  3. CONNACK with Session Present 1; the broker reads what the client
     resends first for that packet id.
Exit status 1: the client resent the PUBLISH (the finding holds); 0: it
resent the PUBREL; 3: the client did not get that far. With --control the
broker skips connection 2 (one reconnection, answered): the client then
resends the PUBREL, as it should, and the script exits 0.

    /usr/bin/python3 live/adapters/paho-python/repro/resend-after-pubrel.py
    /usr/bin/python3 live/adapters/paho-python/repro/resend-after-pubrel.py --control
"""

import os
import socket
import sys
import threading

import paho.mqtt.client as mqtt

NAMES = {1: "CONNECT", 3: "PUBLISH", 6: "PUBREL", 12: "PINGREQ", 14: "DISCONNECT"}


def read_packet(conn):
    head = conn.recv(1)
    if not head:
        return None
    n, mul = 0, 1
    while True:
        b = conn.recv(1)
        if not b:
            return None
        n += (b[0] & 127) * mul
        mul *= 128
        if b[0] & 128 == 0:
            break
    body = b""
    while len(body) < n:
        chunk = conn.recv(n - len(body))
        if not chunk:
            return None
        body += chunk
    return head[0], body


def expect(conn, kind, what):
    p = read_packet(conn)
    if p is None or p[0] >> 4 != kind:
        got = "nothing" if p is None else NAMES.get(p[0] >> 4, "type %d" % (p[0] >> 4))
        print("%s: expected %s, got %s" % (what, NAMES[kind], got))
        finish(3)
    return p


def finish(code):
    # The library's network thread may be sleeping before a reconnection:
    # leave without waiting for it.
    sys.stdout.flush()
    os._exit(code)


def publish_id(p):
    body = p[1]
    tlen = int.from_bytes(body[:2], "big")
    return int.from_bytes(body[2 + tlen:4 + tlen], "big")


def main():
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    srv.settimeout(10)
    port = srv.getsockname()[1]

    cl = mqtt.Client(client_id="repro-pubrel", clean_session=False, protocol=mqtt.MQTTv311)
    published = threading.Event()

    def on_connect(c, _u, _flags, _rc):
        if not published.is_set():
            published.set()
            c.publish("repro/topic", b"m1", qos=2)

    cl.on_connect = on_connect
    cl.reconnect_delay_set(min_delay=0.1, max_delay=0.2)
    cl.connect_async("127.0.0.1", port, keepalive=60)
    cl.loop_start()
    try:
        # Connection 1: the QoS 2 flow up to the client's PUBREL.
        conn, _ = srv.accept()
        conn.settimeout(10)
        expect(conn, 1, "connection 1")
        conn.sendall(bytes([0x20, 2, 0, 0]))  # CONNACK, Session Present 0
        pub = expect(conn, 3, "connection 1")
        pid = publish_id(pub)
        print("connection 1: client sent PUBLISH id %d qos 2 dup %d" % (pid, (pub[0] >> 3) & 1))
        conn.sendall(bytes([0x50, 2]) + pid.to_bytes(2, "big"))  # PUBREC
        expect(conn, 6, "connection 1")
        print("connection 1: client sent PUBREL id %d; the broker closes the connection before its PUBCOMP" % pid)
        conn.close()

        if "--control" not in sys.argv[1:]:
            # Connection 2: a CONNECT that gets no CONNACK.
            conn, _ = srv.accept()
            conn.settimeout(10)
            expect(conn, 1, "connection 2")
            print("connection 2: client sent CONNECT; the broker closes the connection without a CONNACK")
            conn.close()

        # Connection 3: the session resumes.
        conn, _ = srv.accept()
        conn.settimeout(10)
        expect(conn, 1, "connection 3")
        conn.sendall(bytes([0x20, 2, 1, 0]))  # CONNACK, Session Present 1
        while True:
            p = read_packet(conn)
            if p is None:
                print("connection 3: the client sent nothing for id %d" % pid)
                finish(3)
            kind = p[0] >> 4
            if kind == 3 and publish_id(p) == pid:
                print("connection 3: client sent PUBLISH id %d (DUP=%d) of a message whose PUBREL it sent on connection 1: "
                      "a PUBLISH resent after its PUBREL [MQTT-4.3.3-1]" % (pid, (p[0] >> 3) & 1))
                finish(1)
            if kind == 6 and int.from_bytes(p[1][:2], "big") == pid:
                print("connection 3: client resent PUBREL id %d, as MQTT 3.1.1 §4.4 asks" % pid)
                finish(0)
    except socket.timeout:
        print("timed out waiting for the client")
        finish(3)


if __name__ == "__main__":
    main()
