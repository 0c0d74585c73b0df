"""The live tester's adapter for mosquitto-clients (mosquitto_sub and
mosquitto_pub, libmosquitto's command-line clients): the long-running
subject protocol of docs/live.md on stdin and stdout, one JSON object a
line.

The tools keep their session in libmosquitto's memory: a subscriber is one
mosquitto_sub (-c: Clean Session 0) started at the subscribe command,
printing each payload; a publisher is one mosquitto_pub -l (-c) fed one
payload a line. Both run with -d, whose debug lines tell the adapter what
the library did: CONNACK (connected), the granted QoS (subscribed), the
PUBACK or PUBCOMP of a message id (published). The adapter reports no
accepted event: a message mosquitto_pub holds in memory is gone when it
exits, so only its acknowledgement is a promise. Should a tool exit (it
gives up on a lost connection), the adapter starts it again with the same
client id; the messages the dead one had not completed get an error event.
"""

import json
import re
import subprocess
import sys
import threading
import time

out_lock = threading.Lock()


def emit(**ev):
    ev["time"] = time.time_ns() // 1000
    line = json.dumps(ev)
    with out_lock:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


CONNACK = re.compile(r"^Client \S+ received CONNACK \((\d+)\)")
GRANTED = re.compile(r"^Subscribed \(mid: \d+\): (\d+)")
SENDING = re.compile(r"^Client \S+ sending PUBLISH \(d0, q\d, r\d, m(\d+),")
DONE = re.compile(r"^Client \S+ received PUB(ACK|COMP) \(Mid: (\d+)")


class Tool:
    """One mosquitto_sub or mosquitto_pub, restarted whenever it exits."""

    def __init__(self, argv, on_line):
        self.argv, self.on_line = argv, on_line
        self.proc = None
        self.lock = threading.Lock()
        self.stopping = False

    def start(self):
        self.proc = subprocess.Popen(self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True, bufsize=1)
        threading.Thread(target=self.read, args=(self.proc,), daemon=True).start()

    def read(self, proc):
        for line in proc.stdout:
            self.on_line(line.rstrip("\n"))
        proc.wait()
        if self.stopping:
            return
        emit(event="connection_lost", error="%s exited with status %d; starting it again" % (self.argv[0], proc.returncode))
        self.exited()
        time.sleep(0.2)
        with self.lock:
            if not self.stopping:
                self.start()

    def exited(self):
        pass

    def write(self, line):
        with self.lock:
            try:
                self.proc.stdin.write(line + "\n")
                self.proc.stdin.flush()
                return True
            except (BrokenPipeError, OSError):
                return False

    def stop(self):
        self.stopping = True
        if self.proc:
            self.proc.kill()


class Publisher(Tool):
    """mosquitto_pub -l: the n-th payload written is the n-th PUBLISH with
    DUP=0 its debug output shows; its message id names it until PUBACK or
    PUBCOMP."""

    def __init__(self, argv):
        super().__init__(argv, self.line)
        self.fifo, self.by_mid = [], {}
        self.mu = threading.Lock()

    def line(self, text):
        m = SENDING.match(text)
        if m:
            with self.mu:
                if self.fifo:
                    self.by_mid[m.group(1)] = self.fifo.pop(0)
            return
        m = DONE.match(text)
        if m:
            with self.mu:
                msg = self.by_mid.pop(m.group(2), None)
            if msg:
                emit(event="published", msg=msg)
            return
        m = CONNACK.match(text)
        if m:
            emit(event="connected", rc=int(m.group(1)))

    def exited(self):
        with self.mu:
            lost = list(self.by_mid.values()) + self.fifo
            self.fifo, self.by_mid = [], {}
        for msg in lost:
            emit(event="error", msg=msg, error="mosquitto_pub exited before completing it")

    def publish(self, msg):
        with self.mu:
            self.fifo.append(msg)
        if not self.write(msg):
            emit(event="error", msg=msg, error="mosquitto_pub is not running")


def sub_line(text):
    m = CONNACK.match(text)
    if m:
        emit(event="connected", rc=int(m.group(1)))
        return
    m = GRANTED.match(text)
    if m:
        emit(event="subscribed", qos=int(m.group(1)))
        return
    if text and not text.startswith("Client "):
        emit(event="delivered", msg=text)


def common(c):
    argv = ["-h", c.get("host", "127.0.0.1"), "-p", str(c["port"]), "-i", c["id"],
            "-k", str(c.get("keepalive", 60)), "-V", "mqttv311", "-d"]
    if not c.get("clean", False):
        argv.append("-c")
    return argv


def main():
    conn, tools, pub = None, [], None
    for raw in sys.stdin:
        try:
            c = json.loads(raw)
        except ValueError as e:
            emit(event="error", error="bad command: %s" % e)
            continue
        cmd = c.get("cmd")
        if cmd == "connect":
            conn = c  # mosquitto_sub connects when it starts, at subscribe (it needs the topic)
            if c.get("role") == "publisher":
                pub = Publisher(["mosquitto_pub"] + common(conn) + ["-t", c["topic"], "-q", str(c["qos"]), "-l"])
                pub.start()
                tools.append(pub)
        elif cmd == "subscribe":
            t = Tool(["mosquitto_sub"] + common(conn) + ["-t", c["topic"], "-q", str(c["qos"])], sub_line)
            t.start()
            tools.append(t)
        elif cmd == "publish":
            if pub is None:
                emit(event="error", msg=c.get("msg", ""), error="publish before a connect with role publisher")
                continue
            pub.publish(c["msg"])
        elif cmd in ("disconnect", "exit"):
            for t in tools:
                t.stop()
            tools, pub = [], None
            if cmd == "exit":
                return
        else:
            emit(event="error", error="unknown command %r" % cmd)
    for t in tools:
        t.stop()


if __name__ == "__main__":
    main()
