"""Reproduces, without fault injection, the finding of
docs/analyses/mosquitto-clients.md: an idle mosquitto_sub (libmosquitto
2.0.11, Debian's mosquitto-clients) sends its PINGREQ later than its Keep
Alive after its last packet, where MQTT 3.1.1 §3.1.2.10 says "It is the
responsibility of the Client to ensure that the interval between Control
Packets being sent does not exceed the Keep Alive value" [MQTT-3.1.2-23].

A scripted broker on a loopback port accepts mosquitto_sub -k 5 (the least it takes; CONNECT,
SUBSCRIBE, then nothing but PINGREQs, each answered) and times the gap
between the packets the client sends, for about 30 s. Exit status 1: some
gap exceeded the Keep Alive (the finding holds); 0: none did.

    /usr/bin/python3 live/adapters/mosquitto-clients/repro/keepalive-late.py
"""

import socket
import subprocess
import sys
import time

KEEPALIVE = 5


def read_packet(conn):
    head = conn.recv(1)
    if not head:
        return None
    n, mul = 0, 1
    while True:
        b = conn.recv(1)[0]
        n += (b & 127) * mul
        mul *= 128
        if b & 128 == 0:
            break
    body = b""
    while len(body) < n:
        body += conn.recv(n - len(body))
    return head[0], body


def main():
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    port = srv.getsockname()[1]
    sub = subprocess.Popen(["mosquitto_sub", "-h", "127.0.0.1", "-p", str(port), "-k", str(KEEPALIVE),
                            "-i", "repro", "-t", "repro/topic", "-V", "mqttv311"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    srv.settimeout(5)
    try:
        conn, _ = srv.accept()
    except socket.timeout:
        print("mosquitto_sub did not connect")
        sub.kill()
        sys.exit(3)
    conn.settimeout(3 * KEEPALIVE)
    last, worst, late = None, 0.0, 0
    end = time.monotonic() + 30
    try:
        while time.monotonic() < end:
            p = read_packet(conn)
            if p is None:
                break
            now = time.monotonic()
            kind = p[0] >> 4
            if last is not None:
                gap = now - last
                worst = max(worst, gap)
                flag = "  LATE: over the Keep Alive of %d s" % KEEPALIVE if gap > KEEPALIVE else ""
                late += gap > KEEPALIVE
                print("client sent packet type %2d, %.3f s after its previous packet%s" % (kind, gap, flag))
            last = now
            if kind == 1:
                conn.sendall(bytes([0x20, 2, 0, 0]))  # CONNACK
            elif kind == 8:
                pid = p[1][:2]
                conn.sendall(bytes([0x90, 3]) + pid + bytes([0]))  # SUBACK, QoS 0
            elif kind == 12:
                conn.sendall(bytes([0xD0, 0]))  # PINGRESP
    finally:
        sub.kill()
    print("longest gap %.3f s; %d gaps over the Keep Alive of %d s" % (worst, late, KEEPALIVE))
    sys.exit(1 if late else 0)


if __name__ == "__main__":
    main()
