package engine

import (
	"bufio"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/mqttlab/mqttlab/engine/packet"
)

// The broker scenario scripts in testdata/broker/*.txt drive a Broker with
// raw client bytes built by the codec and compare the rendered actions of
// every command with the "> " lines that follow it (no "> " line: the
// command must yield no shown action). Commands:
//
//	config key=value ...        persistence=none|periodic|every snapshot=N inflight=N
//	                            rm=N maxqueued=N queuefull=oldest|newest pubrel=answer|fail
//	                            pubrec=answer|fail ackorder=before|after
//	                            mut=ackbeforepersist|publishafterpubrel|resendwithoutdup|ignorereceivemax|aliasabovemax
//	                            aliasesout=N (BrokerConfig.TopicAliasesOut) startid=N (BrokerConfig.StartPacketID)
//	                            maxpacket=N (BrokerConfig.MaxPacketSize; a CONNACK shows maxpkt=N when not the default)
//	                            (must come first; the broker is built at the first other command)
//	show kinds...               which actions are rendered: send close persist timer
//	at DUR                      set the clock (10s, 1500ms)
//	open C                      ConnOpened for connection C
//	                            maxka=N anonymous=true|false passwd=FILE aclfile=FILE subids=true shared=true
//	subscribe C ID [subid=N] FILTER:QOS[:nl][:rap][:rhN] ...
//	connect C v5|v311 [id=X] [user=U] [pass=P] [clean] [expiry=N] [ka=N] [rm=N] [maxpkt=N] [aliasmax=N]
//	        [will=TOPIC:PAYLOAD:QOS[:retain][:delay=N]]
//	publish C qN [id=N] [dup] [retain] [alias=N] [expiry=N] TOPIC PAYLOAD
//	puback|pubrec|pubrel|pubcomp C ID [rc=HEX]
//	unsubscribe C ID FILTER ...
//	pingreq C | disconnect C [rc=HEX] [expiry=N] | raw C HEX | close C
//	advance DUR                 move the clock, firing due timers in order
//	crash                       drop the broker and every unsynced write
//	crashat N COMMAND           run COMMAND, carry out only its first N actions, crash
//	crashkeep N COMMAND         the same, but the disk keeps the unsynced writes
//	restart                     NewBroker from the synced records
//	stats key=value ...         compare BrokerStats fields
//	dropped CLIENT:REASON:PAYLOAD[:BOUND:POLICY][:id=N] ...  the drops OnDrop reported since the last dropped
//	records PREFIX N            N synced records have keys starting with PREFIX
//	drop PREFIX                 forget the synced records whose keys start with PREFIX
//	                            (a crash that kept only part of a batch of deletions)
//
// Rendered actions: "C <- PACKET" (a PUBLISH's Topic Alias as alias=N, an
// empty Topic Name as ""), "close C" ("close C !" with an error),
// "persist put|del KEY [sync]", "timer set AT" / "timer cancel".
func TestBrokerScripts(t *testing.T) {
	files, err := filepath.Glob("testdata/broker/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scripts in testdata/broker: %v", err)
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".txt"), func(t *testing.T) { bsRunScript(t, f) })
	}
}

// bsWorld is the world a script runs in.
type bsWorld struct {
	t       *testing.T
	cfg     BrokerConfig
	b       *Broker
	now     Time
	conns   map[string]ConnID
	names   map[ConnID]string
	vers    map[ConnID]packet.Version
	timers  map[TimerID]Time
	synced  map[string][]byte
	pending []Persist
	show    map[string]bool
	got     []string    // rendered actions of the last command
	drops   []string    // OnDrop's reports not yet checked (dropped)
	limit   int         // crashat: actions still to carry out before the crash; -1 none
	sent    [][2][]byte // every Send.Data with a copy: the broker must never reuse it
}

func newBsWorld(t *testing.T) *bsWorld {
	w := &bsWorld{
		t: t, cfg: DefaultBrokerConfig(BrokerPolicy{Persistence: LegacyPersistNone, UnknownPubrel: UnknownAckAnswer,
			UnknownPubrec: UnknownAckAnswer, AckOrder: AckAfterCallback}),
		conns: map[string]ConnID{}, names: map[ConnID]string{}, vers: map[ConnID]packet.Version{},
		timers: map[TimerID]Time{}, synced: map[string][]byte{},
		show: map[string]bool{"send": true, "close": true}, limit: -1,
	}
	w.cfg.OnDrop = func(d Drop) {
		s := fmt.Sprintf("%s:%s:%s", d.Client, d.Reason, d.Payload)
		if d.Reason == DropQueueFull {
			s += fmt.Sprintf(":%d:%s", d.Bound, d.Policy)
		}
		if d.PacketID != 0 {
			s += fmt.Sprintf(":id=%d", d.PacketID)
		}
		w.drops = append(w.drops, s)
	}
	return w
}

func bsRunScript(t *testing.T, path string) {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := newBsWorld(t)
	sc := bufio.NewScanner(f)
	var lines []string
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	for i := 0; i < len(lines); i++ {
		line := strings.TrimSpace(lines[i])
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if strings.HasPrefix(line, ">") {
			t.Fatalf("%s:%d: expectation without a command", path, i+1)
		}
		var want []string
		j := i + 1
		for ; j < len(lines); j++ {
			l := strings.TrimSpace(lines[j])
			if !strings.HasPrefix(l, ">") {
				break
			}
			want = append(want, strings.TrimSpace(strings.TrimPrefix(l, ">")))
		}
		w.got = nil
		if err := w.exec(line); err != nil {
			t.Fatalf("%s:%d: %s: %v", path, i+1, line, err)
		}
		if os.Getenv("BROKER_SCRIPT_DUMP") != "" { // prints the actions instead of comparing, to write a script
			fmt.Printf("%s\n", line)
			for _, g := range w.got {
				fmt.Printf("> %s\n", g)
			}
			i = j - 1
			continue
		}
		if !slices.Equal(w.got, want) {
			t.Fatalf("%s:%d: %s\n got:\n  > %s\nwant:\n  > %s", path, i+1, line,
				strings.Join(w.got, "\n  > "), strings.Join(want, "\n  > "))
		}
		i = j - 1
	}
	w.checkSent()
}

// checkSent fails if the bytes of an earlier Send were overwritten.
func (w *bsWorld) checkSent() {
	for i, s := range w.sent {
		if !slices.Equal(s[0], s[1]) {
			w.t.Fatalf("Send %d: its Data changed after it was returned: % x, was % x", i, s[0], s[1])
		}
	}
}

// broker builds the broker on first use.
func (w *bsWorld) broker() *Broker {
	if w.b == nil {
		b, err := NewBroker(w.cfg, nil)
		if err != nil {
			w.t.Fatalf("NewBroker: %v", err)
		}
		w.b = b
	}
	return w.b
}

func (w *bsWorld) conn(name string) ConnID {
	id, ok := w.conns[name]
	if !ok {
		id = ConnID(len(w.conns) + 1)
		w.conns[name] = id
		w.names[id] = name
	}
	return id
}

// step runs one event and renders its actions.
func (w *bsWorld) step(ev Event) {
	acts := w.broker().Step(w.now, ev)
	for _, a := range acts {
		if w.limit == 0 {
			return // crashed before this action
		}
		if w.limit > 0 {
			w.limit--
		}
		w.apply(a)
	}
}

func (w *bsWorld) apply(a Action) {
	switch a := a.(type) {
	case Send:
		w.sent = append(w.sent, [2][]byte{a.Data, slices.Clone(a.Data)})
		v := w.vers[a.Conn]
		if v == 0 {
			v = packet.V311 // a refusal before the version is known
		}
		dec := packet.NewDecoder(v, 0)
		dec.Feed(a.Data)
		p, err := dec.Next()
		if err != nil || p == nil {
			w.t.Fatalf("Send to %s does not decode: %v (%x)", w.names[a.Conn], err, a.Data)
		}
		if !packet.Equal(p, a.Packet) {
			w.t.Fatalf("Send to %s: bytes decode to %#v, Packet is %#v", w.names[a.Conn], p, a.Packet)
		}
		if w.show["send"] {
			w.got = append(w.got, w.names[a.Conn]+" <- "+bsRender(a.Packet))
		}
	case CloseConn:
		if w.show["close"] {
			s := "close " + w.names[a.Conn]
			if a.Reason != nil {
				s += " !"
			}
			w.got = append(w.got, s)
		}
	case Persist:
		w.pending = append(w.pending, a)
		if a.Sync {
			w.syncPending()
		}
		if w.show["persist"] {
			op := "put"
			if a.Op == Delete {
				op = "del"
			}
			s := "persist " + op + " " + a.Key
			if a.Sync {
				s += " sync"
			}
			w.got = append(w.got, s)
		}
	case SetTimer:
		w.timers[a.Timer] = a.At
		if w.show["timer"] {
			w.got = append(w.got, "timer set "+bsFmtDur(Duration(a.At)))
		}
	case CancelTimer:
		delete(w.timers, a.Timer)
		if w.show["timer"] {
			w.got = append(w.got, "timer cancel")
		}
	default:
		w.t.Fatalf("broker emitted %T", a)
	}
}

func bsFmtDur(d Duration) string {
	if d%Second == 0 {
		return strconv.FormatInt(d/Second, 10) + "s"
	}
	return strconv.FormatInt(d/Millisecond, 10) + "ms"
}

func bsParseDur(s string) (Duration, error) {
	switch {
	case strings.HasSuffix(s, "ms"):
		n, err := strconv.ParseInt(strings.TrimSuffix(s, "ms"), 10, 64)
		return n * Millisecond, err
	case strings.HasSuffix(s, "s"):
		n, err := strconv.ParseInt(strings.TrimSuffix(s, "s"), 10, 64)
		return n * Second, err
	}
	return 0, fmt.Errorf("bad duration %q", s)
}

// bsRender prints a packet the broker sent.
func bsRender(p packet.Packet) string {
	rc := func(r packet.ReasonCode) string {
		if r == 0 {
			return ""
		}
		return fmt.Sprintf(" rc=0x%02x", byte(r))
	}
	switch p := p.(type) {
	case *packet.Connack:
		s := fmt.Sprintf("CONNACK sp=%d%s", bsBool(p.SessionPresent), rc(p.Reason))
		if p.Props.Present.Has(packet.PropAssignedClientID) {
			s += " assigned=" + p.Props.AssignedClientID
		}
		if p.Props.Present.Has(packet.PropServerKeepAlive) {
			s += fmt.Sprintf(" serverka=%d", p.Props.ServerKeepAlive)
		}
		if p.Props.Present.Has(packet.PropMaximumPacketSize) && p.Props.MaximumPacketSize != DefaultBrokerConfig(BrokerPolicy{}).MaxPacketSize {
			s += fmt.Sprintf(" maxpkt=%d", p.Props.MaximumPacketSize)
		}
		return s
	case *packet.Publish:
		s := fmt.Sprintf("PUBLISH q%d", p.QoS)
		if p.QoS > 0 {
			s += " id=" + strconv.Itoa(int(p.PacketID))
		}
		if p.Dup {
			s += " dup"
		}
		if p.Retain {
			s += " retain"
		}
		if p.Props.Present.Has(packet.PropMessageExpiry) {
			s += fmt.Sprintf(" expiry=%d", p.Props.MessageExpiry)
		}
		for _, id := range p.Props.SubscriptionIDs {
			s += fmt.Sprintf(" subid=%d", id)
		}
		if p.Props.Present.Has(packet.PropTopicAlias) {
			s += fmt.Sprintf(" alias=%d", p.Props.TopicAlias)
		}
		topic := string(p.Topic)
		if topic == "" {
			topic = `""`
		}
		return s + " " + topic + " " + strconv.Quote(string(p.Payload))
	case *packet.Puback:
		return fmt.Sprintf("PUBACK id=%d%s", p.PacketID, rc(p.Reason))
	case *packet.Pubrec:
		return fmt.Sprintf("PUBREC id=%d%s", p.PacketID, rc(p.Reason))
	case *packet.Pubrel:
		return fmt.Sprintf("PUBREL id=%d%s", p.PacketID, rc(p.Reason))
	case *packet.Pubcomp:
		return fmt.Sprintf("PUBCOMP id=%d%s", p.PacketID, rc(p.Reason))
	case *packet.Suback:
		return fmt.Sprintf("SUBACK id=%d %s", p.PacketID, bsCodes(p.Reasons))
	case *packet.Unsuback:
		return fmt.Sprintf("UNSUBACK id=%d %s", p.PacketID, bsCodes(p.Reasons))
	case *packet.Disconnect:
		return "DISCONNECT" + rc(p.Reason)
	case *packet.Pingresp:
		return "PINGRESP"
	}
	return fmt.Sprintf("%v", p.Type())
}

func bsCodes(rs []packet.ReasonCode) string {
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = fmt.Sprintf("%x", byte(r))
	}
	return "[" + strings.Join(parts, " ") + "]"
}

func bsBool(b bool) int {
	if b {
		return 1
	}
	return 0
}

// exec runs one script command.
func (w *bsWorld) exec(line string) error {
	f := strings.Fields(line)
	cmd, args := f[0], f[1:]
	switch cmd {
	case "config":
		return w.configure(args)
	case "show":
		w.show = map[string]bool{}
		for _, k := range args {
			w.show[k] = true
		}
		return nil
	case "at":
		d, err := bsParseDur(args[0])
		w.now = Time(d)
		return err
	case "advance":
		d, err := bsParseDur(args[0])
		if err != nil {
			return err
		}
		w.advance(w.now + Time(d))
		return nil
	case "open":
		c := w.conn(args[0])
		w.step(ConnOpened{Conn: c})
		return nil
	case "close":
		w.step(ConnClosed{Conn: w.conn(args[0])})
		return nil
	case "crash":
		w.crash()
		return nil
	case "crashat", "crashkeep":
		n, err := strconv.Atoi(args[0])
		if err != nil {
			return err
		}
		w.limit = n
		err = w.exec(strings.Join(args[1:], " "))
		w.limit = -1
		if cmd == "crashkeep" { // the disk happened to keep the unsynced writes
			w.syncPending()
		}
		w.crash()
		return err
	case "restart":
		var recs []Record
		for _, k := range sortedKeys(w.synced) {
			recs = append(recs, Record{Key: k, Value: w.synced[k]})
		}
		b, err := NewBroker(w.cfg, recs)
		w.b = b
		return err
	case "stats":
		return w.checkStats(args)
	case "dropped": // the copies OnDrop was told of since the last "dropped"
		got := strings.Join(w.drops, " ")
		w.drops = nil
		if want := strings.Join(args, " "); got != want {
			return fmt.Errorf("dropped %q, want %q", got, want)
		}
		return nil
	case "drop": // a crash that kept part of a deletion batch: these records went
		for _, k := range sortedKeys(w.synced) {
			if strings.HasPrefix(k, args[0]) {
				delete(w.synced, k)
			}
		}
		return nil
	case "records":
		n := 0
		for k := range w.synced {
			if strings.HasPrefix(k, args[0]) {
				n++
			}
		}
		if strconv.Itoa(n) != args[1] {
			return fmt.Errorf("%d synced records under %q, want %s", n, args[0], args[1])
		}
		return nil
	case "raw":
		data, err := hex.DecodeString(strings.Join(args[1:], ""))
		if err != nil {
			return err
		}
		w.step(BytesReceived{Conn: w.conn(args[0]), Data: data})
		return nil
	}
	c := w.conn(args[0])
	p, err := bsBuildPacket(cmd, args[1:])
	if err != nil {
		return err
	}
	if cp, ok := p.(*packet.Connect); ok {
		w.vers[c] = cp.Version
	}
	data, err := packet.Append(nil, w.vers[c], p)
	if err != nil {
		return fmt.Errorf("encode: %w", err)
	}
	w.step(BytesReceived{Conn: c, Data: data})
	return nil
}

// syncPending makes every pending write durable.
func (w *bsWorld) syncPending() {
	for _, p := range w.pending {
		if p.Op == Put {
			w.synced[p.Key] = p.Value
		} else {
			delete(w.synced, p.Key)
		}
	}
	w.pending = nil
}

// crash drops the broker, its timers and every unsynced write.
func (w *bsWorld) crash() {
	w.b, w.pending, w.timers = nil, nil, map[TimerID]Time{}
}

// advance fires every timer due up to t, in (time, id) order.
func (w *bsWorld) advance(to Time) {
	for {
		var next TimerID
		for _, id := range bsTimerIDs(w.timers) {
			if at := w.timers[id]; at <= to && (next == 0 || at < w.timers[next]) {
				next = id
			}
		}
		if next == 0 {
			w.now = to
			return
		}
		w.now = max(w.now, w.timers[next])
		delete(w.timers, next)
		w.step(TimerFired{Timer: next})
	}
}

func bsTimerIDs(m map[TimerID]Time) []TimerID {
	ids := make([]TimerID, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

func (w *bsWorld) configure(args []string) error {
	p := &w.cfg.Policy
	for _, a := range args {
		k, v, _ := strings.Cut(a, "=")
		n, _ := strconv.Atoi(v)
		switch k {
		case "persistence":
			p.Persistence = map[string]BrokerPersistence{"none": LegacyPersistNone, "periodic": PersistPeriodic, "every": PersistEveryChange}[v]
		case "snapshot":
			p.SnapshotEvery = n
		case "inflight":
			w.cfg.InflightV311 = uint16(n)
		case "rm":
			w.cfg.ReceiveMaximum = uint16(n)
		case "maxqueued":
			w.cfg.MaxQueued = n
		case "startid":
			w.cfg.StartPacketID = uint16(n)
		case "queuefull":
			w.cfg.QueueFull = map[string]QueueFull{"oldest": DropOldest, "newest": DropNewest}[v]
		case "pubrel":
			p.UnknownPubrel = map[string]UnknownAck{"answer": UnknownAckAnswer, "fail": LegacyUnknownAckFail}[v]
		case "pubrec":
			p.UnknownPubrec = map[string]UnknownAck{"answer": UnknownAckAnswer, "fail": LegacyUnknownAckFail}[v]
		case "ackorder":
			p.AckOrder = map[string]AckOrder{"before": LegacyAckBeforeCallback, "after": AckAfterCallback}[v]
		case "mut":
			p.Mutations |= map[string]Mutation{"ackbeforepersist": MutAckBeforePersist, "publishafterpubrel": MutPublishAfterPubrel,
				"resendwithoutdup": MutResendWithoutDup, "ignorereceivemax": MutIgnoreReceiveMax,
				"ignoregrantedqos": MutIgnoreGrantedQoS, "copypersubscription": MutCopyPerSubscription,
				"keepunsubscribed": MutKeepUnsubscribed, "retainemptypayload": MutRetainEmptyPayload,
				"expiryunchanged": MutExpiryUnchanged, "shareddroponend": MutSharedDropOnEnd, "sharedtoall": MutSharedToAll,
				"aliasabovemax": MutAliasAboveMax, "nopumponack": MutNoPumpOnAck, "ignoresessionexpiry": MutIgnoreSessionExpiry, "willdropondisconnect": MutWillDropOnDisconnect, "ignoremaxsize": MutIgnoreMaxSize,
				"subidsfirstonly":        MutSubIDsFirstOnly,
				"willonnormaldisconnect": MutWillOnNormalDisconnect, "volatileretained": MutVolatileRetained,
				"maxsizeestimate": MutMaxSizeEstimate, "halfdelete": MutHalfDelete, "expiryrestart": MutExpiryRestart,
				"queuebelowbound":      MutQueueBelowBound,
				"finitesessionnoqueue": MutFiniteSessionNoQueue}[v]
		case "topicalias":
			w.cfg.TopicAliasMaximum = uint16(n)
		case "aliasesout":
			w.cfg.TopicAliasesOut = uint16(n)
		case "maxpacket":
			w.cfg.MaxPacketSize = uint32(n)
		case "subids":
			w.cfg.SubscriptionIDs = v == "true"
		case "shared":
			w.cfg.SharedSubscriptions = v == "true"
		case "maxka":
			w.cfg.MaxKeepAlive = uint16(n)
		case "anonymous", "passwd", "aclfile":
			if err := w.configureAccess(k, v); err != nil {
				return err
			}
		default:
			return fmt.Errorf("unknown config key %q", k)
		}
	}
	return w.cfg.Validate()
}

// configureAccess sets one Access field from a script's config line:
// anonymous=true|false, passwd=FILE (a mosquitto password file under
// testdata/broker), aclfile=FILE (a mosquitto ACL file there).
func (w *bsWorld) configureAccess(k, v string) error {
	if w.cfg.Access == nil {
		w.cfg.Access = &Access{}
	}
	a := w.cfg.Access
	if k == "anonymous" {
		a.Anonymous = v == "true"
		return nil
	}
	text, err := os.ReadFile(filepath.Join("testdata", "broker", v))
	if err != nil {
		return err
	}
	if k == "passwd" {
		a.Users, err = ParsePasswordFile(string(text))
		return err
	}
	a.ACL = true
	a.Rules, err = ParseACLFile(string(text))
	return err
}

func (w *bsWorld) checkStats(args []string) error {
	st := w.broker().Stats()
	fields := map[string]uint64{
		"connections": uint64(st.Connections), "sessions": uint64(st.Sessions), "retained": uint64(st.Retained),
		"inflight": uint64(st.Inflight), "queued": uint64(st.Queued), "in": st.PublishesIn, "out": st.PublishesOut,
		"droppedoldest": st.DroppedOldest, "droppednewest": st.DroppedNewest, "droppedqos0": st.DroppedQoS0,
		"expired": st.Expired, "wills": st.Wills, "droppedexpired": st.DroppedExpired, "droppedsize": st.DroppedSize,
	}
	for _, a := range args {
		k, v, _ := strings.Cut(a, "=")
		got, ok := fields[k]
		if !ok {
			return fmt.Errorf("unknown stat %q", k)
		}
		if strconv.FormatUint(got, 10) != v {
			return fmt.Errorf("stat %s = %d, want %s", k, got, v)
		}
	}
	return nil
}

// bsBuildPacket builds the client packet of a script command.
func bsBuildPacket(cmd string, args []string) (packet.Packet, error) {
	num := func(s string) uint16 { n, _ := strconv.Atoi(s); return uint16(n) }
	opt := func(key string) (string, bool) {
		for _, a := range args {
			if v, ok := strings.CutPrefix(a, key+"="); ok {
				return v, true
			}
		}
		return "", false
	}
	has := func(flag string) bool { return slices.Contains(args, flag) }
	rcOpt := func() packet.ReasonCode {
		v, _ := opt("rc")
		n, _ := strconv.ParseUint(v, 16, 8)
		return packet.ReasonCode(n)
	}
	switch cmd {
	case "connect":
		return bsBuildConnect(args, opt, has)
	case "publish":
		p := &packet.Publish{QoS: packet.QoS(args[0][1] - '0'), Dup: has("dup"), Retain: has("retain")}
		if v, ok := opt("id"); ok {
			p.PacketID = num(v)
		}
		if v, ok := opt("expiry"); ok {
			p.Props.Present = p.Props.Present.With(packet.PropMessageExpiry)
			p.Props.MessageExpiry = uint32(num(v))
		}
		if v, ok := opt("alias"); ok {
			p.Props.Present = p.Props.Present.With(packet.PropTopicAlias)
			p.Props.TopicAlias = num(v)
		}
		var pos []string
		for _, a := range args[1:] {
			if !strings.Contains(a, "=") && a != "dup" && a != "retain" {
				pos = append(pos, a)
			}
		}
		if len(pos) != 2 {
			return nil, fmt.Errorf("publish needs TOPIC PAYLOAD")
		}
		if pos[0] != "-" {
			p.Topic = []byte(pos[0])
		}
		if pos[1] != "-" {
			p.Payload = []byte(pos[1])
		}
		return p, nil
	case "puback":
		return &packet.Puback{PacketID: num(args[0]), Reason: rcOpt()}, nil
	case "pubrec":
		return &packet.Pubrec{PacketID: num(args[0]), Reason: rcOpt()}, nil
	case "pubrel":
		return &packet.Pubrel{PacketID: num(args[0]), Reason: rcOpt()}, nil
	case "pubcomp":
		return &packet.Pubcomp{PacketID: num(args[0]), Reason: rcOpt()}, nil
	case "subscribe":
		p := &packet.Subscribe{PacketID: num(args[0])}
		if v, ok := opt("subid"); ok {
			p.Props.SubscriptionIDs = []uint32{uint32(num(v))}
		}
		for _, a := range args[1:] {
			if strings.HasPrefix(a, "subid=") {
				continue
			}
			parts := strings.Split(a, ":")
			s := packet.Subscription{Filter: parts[0], QoS: packet.QoS(num(parts[1]))}
			for _, o := range parts[2:] {
				switch {
				case o == "nl":
					s.NoLocal = true
				case o == "rap":
					s.RetainAsPublished = true
				case strings.HasPrefix(o, "rh"):
					s.RetainHandling = byte(num(o[2:]))
				}
			}
			p.Subs = append(p.Subs, s)
		}
		return p, nil
	case "unsubscribe":
		return &packet.Unsubscribe{PacketID: num(args[0]), Filters: args[1:]}, nil
	case "pingreq":
		return &packet.Pingreq{}, nil
	case "disconnect":
		p := &packet.Disconnect{Reason: rcOpt()}
		if v, ok := opt("expiry"); ok {
			n, _ := strconv.ParseUint(v, 10, 32)
			p.Props.Present = p.Props.Present.With(packet.PropSessionExpiry)
			p.Props.SessionExpiry = uint32(n)
		}
		return p, nil
	}
	return nil, fmt.Errorf("unknown command %q", cmd)
}

func bsBuildConnect(args []string, opt func(string) (string, bool), has func(string) bool) (packet.Packet, error) {
	p := &packet.Connect{Version: packet.V5, CleanStart: has("clean")}
	if args[0] == "v311" {
		p.Version = packet.V311
	}
	p.ClientID, _ = opt("id")
	if v, ok := opt("user"); ok {
		p.HasUsername, p.Username = true, v
	}
	if v, ok := opt("pass"); ok {
		p.HasPassword, p.Password = true, []byte(v)
	}
	u32 := func(s string) uint32 { n, _ := strconv.ParseUint(s, 10, 32); return uint32(n) }
	if v, ok := opt("ka"); ok {
		p.KeepAlive = uint16(u32(v))
	}
	if v, ok := opt("expiry"); ok {
		p.Props.Present = p.Props.Present.With(packet.PropSessionExpiry)
		p.Props.SessionExpiry = u32(v)
	}
	if v, ok := opt("rm"); ok {
		p.Props.Present = p.Props.Present.With(packet.PropReceiveMaximum)
		p.Props.ReceiveMaximum = uint16(u32(v))
	}
	if v, ok := opt("maxpkt"); ok {
		p.Props.Present = p.Props.Present.With(packet.PropMaximumPacketSize)
		p.Props.MaximumPacketSize = u32(v)
	}
	if v, ok := opt("aliasmax"); ok {
		p.Props.Present = p.Props.Present.With(packet.PropTopicAliasMaximum)
		p.Props.TopicAliasMaximum = uint16(u32(v))
	}
	if v, ok := opt("will"); ok {
		parts := strings.Split(v, ":")
		if len(parts) < 3 {
			return nil, fmt.Errorf("will=TOPIC:PAYLOAD:QOS[:retain][:delay=N]")
		}
		wl := &packet.Will{Topic: parts[0], Payload: []byte(parts[1]), QoS: packet.QoS(u32(parts[2]))}
		for _, o := range parts[3:] {
			if o == "retain" {
				wl.Retain = true
			} else if d, ok := strings.CutPrefix(o, "delay="); ok {
				wl.Props.Present = wl.Props.Present.With(packet.PropWillDelay)
				wl.Props.WillDelay = u32(d)
			}
		}
		p.Will = wl
	}
	return p, nil
}
