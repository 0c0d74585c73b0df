package live

import (
	"strconv"
	"strings"
	"sync"

	"github.com/mqttlab/mqttlab/model"
)

// DropLineFormat is the line a managed broker writes, on its stdout or
// stderr, for each message copy it discards undelivered; the tester
// records each as a model.Dropped event. simrun broker writes it; any
// broker may, to be judged by the limits it declares (-promise
// broker=...,queue:N:POLICY):
//
//	dropped client=ID reason=REASON [bound=N policy=POLICY] [topic="T"] msg="PAYLOAD"
//
// anywhere in a line (a timestamp or prefix may come first). Values are
// bare words or double-quoted Go strings; msg is the message's payload (a
// live run's message id), REASON queue-full (the session's queue was at
// its bound N; POLICY drop-oldest or drop-newest says which copy went),
// expired, too-large or qos0-offline. Unknown keys are ignored.
const DropLineFormat = `dropped client=ID reason=REASON [bound=N policy=POLICY] [topic="T"] msg="PAYLOAD"`

// ParseDropLine reads a drop line (DropLineFormat) into a Dropped event
// (without its Time); ok is false for any other line.
func ParseDropLine(line string) (e model.Event, ok bool) {
	at := strings.Index(line, "dropped client=")
	if at < 0 {
		return e, false
	}
	rest := line[at+len("dropped "):]
	kv := map[string]string{}
	for rest != "" {
		rest = strings.TrimLeft(rest, " ")
		key, after, found := strings.Cut(rest, "=")
		if !found || key == "" || strings.ContainsRune(key, ' ') {
			break
		}
		var val string
		if strings.HasPrefix(after, `"`) {
			q, err := strconv.QuotedPrefix(after)
			if err != nil {
				return e, false
			}
			val, _ = strconv.Unquote(q)
			rest = after[len(q):]
		} else {
			val, rest, _ = strings.Cut(after, " ")
		}
		kv[key] = val
	}
	if kv["client"] == "" || kv["reason"] == "" {
		return e, false
	}
	if _, has := kv["msg"]; !has {
		return e, false
	}
	reason := kv["reason"]
	if b, p := kv["bound"], kv["policy"]; b != "" || p != "" {
		reason += " bound=" + b + " policy=" + p
	}
	return model.Event{Kind: model.Dropped, Node: model.BrokerNode, Peer: kv["client"], Msg: kv["msg"], Topic: kv["topic"], Reason: reason}, true
}

// lineWriter calls fn with every whole line written to it.
type lineWriter struct {
	mu  sync.Mutex
	buf []byte
	fn  func(string)
}

func (w *lineWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, b...)
	for {
		i := strings.IndexByte(string(w.buf), '\n')
		if i < 0 {
			break
		}
		line := string(w.buf[:i])
		w.buf = w.buf[i+1:]
		w.fn(line)
	}
	if len(w.buf) > 1<<20 { // no newline in a megabyte: not a log line
		w.buf = w.buf[:0]
	}
	return len(b), nil
}
