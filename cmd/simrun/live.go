package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"os/user"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/mqttlab/mqttlab/engine"
	"github.com/mqttlab/mqttlab/engine/packet"
	"github.com/mqttlab/mqttlab/live"
	"github.com/mqttlab/mqttlab/sim"
)

// liveDoc is simrun live's help text.
const liveDoc = `Judge real MQTT programs, a Jepsen for MQTT: start the broker and the clients
under test as processes (or ours: this project's engine), pass every
connection through a recording proxy, inject real faults drawn from -seed
(SIGKILL and restart, SIGSTOP/SIGCONT, connection cuts, black-holed
directions, slow chunked forwarding), heal, wait for quiescence, and judge
the whole history with the simulator's model against the promises declared
with -promise. The run directory (-out) holds summary.txt, violations.txt
(each with the history excerpt behind it), history.jsonl, schedule.txt,
chart.html (the run's sequence chart), logs/ (every subject's output) and
data/ (their data directories).

Templates: -broker takes {port} {dir}; -subscriber {port} {id} {topic} {qos}
{dir}; -publisher also {msg}. The contract for external clients (docs/live.md):
a message's payload is its unique id; a subscriber's stdout line containing an
id is a delivery; a publisher that exits 0 had its message accepted and
acknowledged.

The tester owns its run directory: a rerun into it (the printed replay
command, twice the same -out) first clears the earlier live run's files,
so nothing of that run (its broker's or clients' data, logs, verdict)
reaches the next; a directory holding other files is refused unless -force.

Exit status: 0 nothing promised violated, 1 a violation, 2 usage error, a
subject that did not start (its stderr is shown) or a run directory holding
other files (without -force), 3 the run directory could not be written,
130 interrupted (every child killed; what was recorded is judged and
written).`

// builtinConfigs are the broker config templates -broker-config names.
var builtinConfigs = map[string]string{
	"mosquitto": "# mosquitto with Debian's persistence defaults: persistence on, autosave every 1800 s\n" +
		"listener {port} 127.0.0.1\nallow_anonymous true\npersistence true\npersistence_location {dir}/\n" +
		"log_dest stderr\nlog_type error\nlog_type warning\nlog_type notice\nlog_type information\nconnection_messages true\n",
	"mosquitto-strict": "# mosquitto with the strictest persistence it offers: save after every change\n" +
		"listener {port} 127.0.0.1\nallow_anonymous true\npersistence true\npersistence_location {dir}/\n" +
		"autosave_on_changes true\nautosave_interval 1\n" +
		"log_dest stderr\nlog_type error\nlog_type warning\nlog_type notice\nlog_type information\nconnection_messages true\n",
}

// liveFlags are simrun live's flags.
type liveFlags struct {
	seed                                  uint64
	broker, brokerPreset, brokerConfig    string
	brokerAddr                            string
	subscriber, publisher, adapters       string
	subscribers, publishers               int
	clientPreset, version, promise, out   string
	topic, faults                         string
	force                                 bool
	qos, rate, messages                   int
	duration, interval, liveness, startTO time.Duration
}

func (f *liveFlags) add(fs *flagSet) {
	fs.Uint64Var(&f.seed, "seed", 0, "seed of the fault schedule (0: drawn from the clock, and printed)")
	fs.StringVar(&f.broker, "broker", "ours", "broker under test: ours (simrun broker as a child process), mosquitto (mosquitto -c {dir}/mosquitto.conf with -broker-config), or a command template with {port} {dir}")
	fs.StringVar(&f.brokerPreset, "broker-preset", defaultPreset, "engine preset of -broker ours (see 'simrun presets')")
	fs.StringVar(&f.brokerConfig, "broker-config", "", "config file template ({port} {dir}) written to {dir}/ before each broker start: a file, or built-in mosquitto (Debian's persistence defaults) or mosquitto-strict (save after every change); with -broker ours a simrun broker config file, given to it with -config")
	fs.StringVar(&f.brokerAddr, "broker-addr", "", "HOST:PORT of a broker the tester does not manage (no broker faults)")
	fs.StringVar(&f.subscriber, "subscriber", "ours", "the subscribers: an adapter's name (ours, or a folder of -adapters: paho-go, paho-python, mqttjs, mosquitto-clients, ...), a path to an adapter's folder, or a command template ({port} {id} {topic} {qos} {dir})")
	fs.StringVar(&f.publisher, "publisher", "ours", "the publishers: an adapter's name or folder as -subscriber, or a command template ({port} {id} {topic} {qos} {dir} {msg}) run once per message")
	fs.StringVar(&f.adapters, "adapters", "", "folder of the adapters (default: live/adapters of the working directory or the nearest parent that has one)")
	fs.IntVar(&f.subscribers, "subscribers", 2, "number of subscribers (ids s1, s2, ...)")
	fs.IntVar(&f.publishers, "publishers", 2, "number of publishers (ids p1, p2, ...)")
	fs.StringVar(&f.clientPreset, "client-preset", defaultPreset, "engine preset of our clients")
	fs.StringVar(&f.version, "version", "5", "MQTT version of our clients: 3 (3.1.1) or 5")
	fs.StringVar(&f.promise, "promise", "spec", "what the subjects promise: comma-separated sets applied in order to the spec's promises ("+strings.Join(promiseNames(), ", ")+", or a preset name), for every role; or per role, ROLE=SETS;ROLE=SETS with ROLE broker, clients, subscribers, publishers or a client id (s1, p2); the broker's sets may include its limits, "+limitDoc+"; default: each role's adapter's own profile (paho-go, paho-python, mqttjs, mosquitto-clients; spec for ours and templates), the spec for the broker")
	fs.StringVar(&f.out, "out", "", "run directory (default live-runs/seed-N); the tester owns it: an earlier live run's files in it are cleared first")
	fs.BoolVar(&f.force, "force", false, "use a run directory that holds files no live run wrote (they are kept; the live run's are cleared)")
	fs.StringVar(&f.topic, "topic", "mqttlab/live", "topic of the workload")
	fs.StringVar(&f.faults, "faults", "all", "fault kinds: "+faultKindNames()+"; or all, client, broker, none")
	fs.IntVar(&f.qos, "qos", 2, "QoS of the subscriptions and publishes: 1 or 2")
	fs.IntVar(&f.rate, "rate", 50, "messages per second, all publishers together")
	fs.IntVar(&f.messages, "messages", 0, "at most this many messages (0: as many as -duration allows)")
	fs.DurationVar(&f.duration, "duration", 20*time.Second, "length of the fault phase")
	fs.DurationVar(&f.interval, "fault-interval", time.Second, "mean gap between two faults")
	fs.DurationVar(&f.liveness, "liveness", 15*time.Second, "bound of the wait for quiescence once every fault healed")
	fs.DurationVar(&f.startTO, "start-timeout", 10*time.Second, "bound of each subject's start")
}

func faultKindNames() string {
	var s []string
	for _, k := range live.FaultKinds() {
		s = append(s, string(k))
	}
	return strings.Join(s, ", ")
}

// cmdLive is simrun live.
func (e *env) cmdLive(args []string) int {
	fs := e.newFlagSet("live", "[flags]", liveDoc)
	var f liveFlags
	f.add(fs)
	pos, err := fs.parse(args)
	if err != nil {
		return e.fail("live", err)
	}
	if len(pos) > 0 {
		return e.fail("live", badUsage("live", "unexpected argument %q", pos[0]))
	}
	cfg, err := f.config(fs)
	if err != nil {
		return e.fail("live", err)
	}
	if err := prepareLiveDir(cfg.Dir, cfg.Seed, f.force); err != nil {
		return e.fail("live", err)
	}
	cfg.Log = e.stderr
	ctx, stop := signal.NotifyContext(e.ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	fmt.Fprintf(e.stdout, "live: seed %d, broker %s, %s, faults %s, promise %s, run directory %s\n",
		cfg.Seed, cfg.Broker.Name, f.clientsText(), f.faults, f.promise, absPath(cfg.Dir))
	rep, err := live.RunTest(ctx, cfg)
	if rep == nil {
		fmt.Fprintf(e.stderr, "simrun live: %v\n", err) // keeps a subject's stderr as it wrote it
		return exitUsage
	}
	fmt.Fprint(e.stdout, rep.Summary())
	fmt.Fprintf(e.stdout, "run directory %s\n", cfg.Dir)
	if err == nil {
		err = writeLiveChart(cfg.Dir, rep, f.replay(fs, cfg.Seed))
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "simrun live: writing the run directory: %v\n", err)
		return exitIO
	}
	switch {
	case rep.Interrupted:
		return exitInterrupted
	case rep.Failed():
		fmt.Fprintf(e.stdout, "replay the fault schedule: %s\n", f.replay(fs, cfg.Seed))
		return exitViolation
	}
	return exitOK
}

// config validates the flags and builds the test config.
func (f *liveFlags) config(fs *flagSet) (live.TestConfig, error) {
	cfg := live.DefaultTestConfig()
	bad := func(format string, args ...any) error { return badUsage("live", format, args...) }
	kinds, err := live.ParseFaults(f.faults)
	if err != nil {
		return cfg, bad("bad -faults: %v", err)
	}
	if !fs.isSet("promise") {
		f.promise = f.defaultPromise()
	}
	if cfg.Promise, cfg.PromiseRoles, err = parsePromise(f.promise, f.subscribers, f.publishers); err != nil {
		return cfg, bad("bad -promise: %v", err)
	}
	cp, err := engine.PresetByName(f.clientPreset)
	if err != nil {
		return cfg, bad("bad -client-preset: %v", err)
	}
	level, err := parseVersion(f.version)
	if err != nil {
		return cfg, bad("bad -version %q: %v", f.version, err)
	}
	if f.brokerAddr != "" && fs.isSet("broker") {
		return cfg, bad("give -broker or -broker-addr, not both")
	}
	if cfg.Broker, err = f.brokerSubject(); err != nil {
		return cfg, err
	}
	seed := f.seed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano()) & (1<<31 - 1)
	}
	dir := f.out
	if dir == "" {
		dir = filepath.Join("live-runs", fmt.Sprintf("seed-%d", seed))
	}
	cfg.Seed, cfg.Dir = seed, dir
	if cfg.Subscriber, cfg.SubscriberAdapter, err = f.subject(f.subscriber); err != nil {
		return cfg, bad("bad -subscriber: %v", err)
	}
	if cfg.Publisher, cfg.PublisherAdapter, err = f.subject(f.publisher); err != nil {
		return cfg, bad("bad -publisher: %v", err)
	}
	cfg.Subscribers, cfg.Publishers, cfg.Topic, cfg.QoS = f.subscribers, f.publishers, f.topic, uint8(f.qos)
	cfg.Rate, cfg.Messages, cfg.Duration, cfg.Faults = f.rate, f.messages, f.duration, kinds
	cfg.FaultInterval, cfg.Liveness, cfg.StartTimeout = f.interval, f.liveness, f.startTO
	cfg.ClientPolicy, cfg.Version = cp.Client, packet.Version(level)
	if f.qos < 1 || f.qos > 2 {
		return cfg, bad("bad -qos %d: 1 or 2", f.qos)
	}
	return cfg, nil
}

// defaultPromise is -promise when not given: each role's adapter's own
// profile (a promise set of the adapter's name), the spec for ours, a
// template, or an adapter without one.
func (f *liveFlags) defaultPromise() string {
	profile := func(v string) string {
		if v == "" || strings.ContainsAny(v, " \t{/") || !hasProfile(v) {
			return "spec"
		}
		return v
	}
	sub, pub := profile(f.subscriber), profile(f.publisher)
	if sub == "spec" && pub == "spec" {
		return "spec"
	}
	return "subscribers=" + sub + ";publishers=" + pub
}

// subject resolves -subscriber or -publisher: ours (our engine client, in
// process: no template and no adapter), an adapter (a single word naming
// a folder of the adapters, or a path to a folder holding run.sh), or a
// command template.
func (f *liveFlags) subject(v string) (string, *live.Adapter, error) {
	v = strings.TrimSpace(v)
	if v == "" || v == "ours" {
		return "", nil, nil
	}
	if strings.ContainsAny(v, " \t{") {
		return v, nil, nil
	}
	root, err := f.adapterRoot()
	if err != nil && !strings.ContainsRune(v, '/') {
		return "", nil, err
	}
	a, err := live.FindAdapter(root, v)
	if err != nil {
		return "", nil, err
	}
	return "", &a, nil
}

// adapterRoot is -adapters, or live/adapters of the working directory or
// its nearest parent that has one.
func (f *liveFlags) adapterRoot() (string, error) {
	if f.adapters != "" {
		return f.adapters, nil
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		cand := filepath.Join(dir, "live", "adapters")
		if st, err := os.Stat(cand); err == nil && st.IsDir() {
			return cand, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no live/adapters folder in the working directory or its parents: run simrun from the repository, or give -adapters")
		}
		dir = parent
	}
}

// brokerSubject resolves -broker, -broker-preset, -broker-config and
// -broker-addr.
func (f *liveFlags) brokerSubject() (live.BrokerSubject, error) {
	bad := func(format string, args ...any) error { return badUsage("live", format, args...) }
	if f.brokerAddr != "" {
		return live.BrokerSubject{Name: "unmanaged broker at " + f.brokerAddr, Addr: f.brokerAddr}, nil
	}
	env := []string{"PATH=" + os.Getenv("PATH") + ":/usr/sbin:/usr/local/sbin"}
	var b live.BrokerSubject
	switch f.broker {
	case "ours":
		preset, err := engine.PresetByName(f.brokerPreset)
		if err != nil {
			return b, bad("bad -broker-preset: %v", err)
		}
		exe, err := os.Executable()
		if err != nil {
			return b, fmt.Errorf("cannot find simrun's own executable: %w", err)
		}
		b = live.BrokerSubject{Name: "ours (simrun broker, preset " + preset.Name + ")",
			Command: fmt.Sprintf("exec %s broker -listen 127.0.0.1:{port} -data {dir} -preset %s", shellWord(exe), preset.Name),
			Env:     append(env, childEnv+"=1")}
		if f.brokerConfig == "" {
			return b, nil
		}
		// simrun broker reads its own config file with -config, in place
		// (its relative paths are the file's): a copy written into {dir},
		// its record store, would be read as a corrupt record.
		if _, ok := builtinConfigs[f.brokerConfig]; ok {
			return b, bad("bad -broker-config: %s is a mosquitto config; -broker ours takes a simrun broker config file (simrun broker -h)", f.brokerConfig)
		}
		path := absPath(f.brokerConfig)
		if _, err := loadBrokerConfig(path, engine.DefaultBrokerConfig(preset.Broker)); err != nil {
			return b, bad("bad -broker-config: %v", err)
		}
		b.Command += " -config " + shellWord(path)
		b.Name += " with config " + f.brokerConfig
		return b, nil
	case "mosquitto":
		b = live.BrokerSubject{Name: "mosquitto", Command: "exec mosquitto -c {dir}/mosquitto.conf", Env: env}
		if f.brokerConfig == "" {
			f.brokerConfig = "mosquitto"
		}
	default:
		b = live.BrokerSubject{Name: f.broker, Command: f.broker, Env: env}
	}
	if f.brokerConfig != "" {
		text, name, err := brokerConfigText(f.brokerConfig)
		if err != nil {
			return b, bad("bad -broker-config: %v", err)
		}
		b.Config, b.ConfigName = text, name
		b.Name += " with config " + f.brokerConfig
	}
	return b, nil
}

// brokerConfigText reads a config template: a built-in name or a file.
func brokerConfigText(s string) (text, name string, err error) {
	if t, ok := builtinConfigs[s]; ok {
		return userLine() + t, "mosquitto.conf", nil
	}
	data, err := os.ReadFile(s)
	if err != nil {
		return "", "", err
	}
	return string(data), filepath.Base(s), nil
}

// userLine keeps mosquitto running as the current user (as root it would
// switch to user mosquitto, who cannot write the run directory).
func userLine() string {
	if os.Getuid() == 0 {
		return "user root\n"
	}
	if u, err := user.Current(); err == nil {
		return "user " + u.Username + "\n"
	}
	return ""
}

// shellWord quotes a path for sh.
func shellWord(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// clientsText describes the clients of the run: theirs or ours, and ours'
// version and preset.
func (f *liveFlags) clientsText() string {
	sub, pub := "ours", "ours"
	if f.subscriber != "" {
		sub = "external"
	}
	if f.publisher != "" {
		pub = "external"
	}
	level, _ := parseVersion(f.version)
	return fmt.Sprintf("%d subscribers (%s) and %d publishers (%s), our clients MQTT %s preset %s, QoS %d",
		f.subscribers, sub, f.publishers, pub, versionLabel("", level, sim.Workload{}), f.clientPreset, f.qos)
}

// replay is the command that reruns the same schedule.
func (f *liveFlags) replay(fs *flagSet, seed uint64) string {
	var b strings.Builder
	b.WriteString(replayPrefix + " live")
	fs.Visit(func(fl *flag.Flag) {
		v := fl.Value.String()
		switch {
		case fl.Name == "seed" || fl.Name == "out" || fl.Name == "force":
			return
		case fl.Name == "broker-config" && builtinConfigs[v] == "":
			v = absPath(v) // a file: the command runs from any directory
		default:
			v = shellQuote(v)
		}
		fmt.Fprintf(&b, " -%s %s", fl.Name, v)
	})
	fmt.Fprintf(&b, " -seed %d", seed)
	return b.String()
}
