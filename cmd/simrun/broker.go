package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/signal"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mqttlab/mqttlab/engine"
	"github.com/mqttlab/mqttlab/live"
)

// brokerDoc is simrun broker's help text.
const brokerDoc = `Serve this project's MQTT broker (engine.Broker behind live.ServeBroker) on a
TCP address, with its durable state in a file store in DIR. It serves until
SIGINT or SIGTERM (a clean stop: the engine writes what it persists, exit 0)
and logs one stderr line per connection event. After a kill (SIGKILL, a power
cut) the same command restarts it from DIR: sessions, subscriptions and queued
messages are what the preset's persistence made durable. The first stderr line
is "simrun broker: listening on HOST:PORT" (with -listen HOST:0 the kernel
picks the port).`

// cmdBroker is simrun broker.
func (e *env) cmdBroker(args []string) int {
	fs := e.newFlagSet("broker", "-data DIR [-listen ADDR] [-preset P] [-config FILE]", brokerDoc)
	fs.footer = brokerConfDoc
	listen := fs.String("listen", "127.0.0.1:1883", "TCP address to listen on (HOST:0 picks a free port)")
	data := fs.String("data", "", "directory of the broker's durable record store (created if missing; required)")
	presetName := fs.String("preset", defaultPreset, "engine policy preset whose broker policy to run (see 'simrun presets')")
	confPath := fs.String("config", "", "broker config file: limits, persistence, password and ACL files, features (keys below)")
	canary := fs.String("canary", "", "serve with a deliberate bug, for testing a fuzzer or tester (never for clients): "+strings.Join(canaryNames(), ", "))
	pos, err := fs.parse(args)
	if err != nil {
		return e.fail("broker", err)
	}
	if len(pos) > 0 {
		return e.fail("broker", badUsage("broker", "unexpected argument %q", pos[0]))
	}
	if *data == "" {
		return e.fail("broker", badUsage("broker", "-data DIR is required"))
	}
	preset, err := engine.PresetByName(*presetName)
	if err != nil {
		return e.fail("broker", badUsage("broker", "bad -preset: %v", err))
	}
	cfg := engine.DefaultBrokerConfig(preset.Broker)
	// Served by default, as mosquitto 2.0 and the other widely used brokers
	// do; the config keys turn them off.
	cfg.SharedSubscriptions, cfg.SubscriptionIDs = true, true
	var lim driverLimits
	if *confPath != "" {
		if cfg, lim, err = loadBrokerFile(*confPath, cfg); err != nil {
			return e.fail("broker", badUsage("broker", "%v", err))
		}
	}
	if _, ok := live.Canaries[*canary]; *canary != "" && !ok {
		return e.fail("broker", badUsage("broker", "bad -canary %q: known: %s", *canary, strings.Join(canaryNames(), ", ")))
	}
	ctx, stop := signal.NotifyContext(e.ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	return e.serveBroker(ctx, *listen, *data, preset.Name, cfg, lim, *canary)
}

// canaryNames lists live.Canaries' names, sorted.
func canaryNames() []string {
	var names []string
	for n := range live.Canaries {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// serveBroker serves until ctx ends, then stops the broker cleanly.
func (e *env) serveBroker(ctx context.Context, addr, dir, presetName string, cfg engine.BrokerConfig, lim driverLimits, canary string) int {
	st, err := live.OpenStore(dir)
	if err != nil {
		return e.fail("broker", ioFailure(err, "data directory"))
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return e.fail("broker", err)
	}
	var mu sync.Mutex // the log lines of the loop and of this goroutine
	logf := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(e.stderr, "simrun broker: %s "+format+"\n", append([]any{time.Now().UTC().Format("15:04:05.000")}, args...)...)
	}
	cfg.OnDrop = func(d engine.Drop) { logf("%s", dropLine(d)) }
	b, err := live.ServeBroker(ln, live.BrokerOptions{
		Config:   cfg,
		Store:    st,
		Recorder: live.NewDiscardRecorder(),
		ConnLog:  func(line string) { logf("%s", line) },

		ConnectTimeout: lim.connectTimeout,
		MaxConnections: lim.maxConnections,
		Canary:         canary,
	})
	if err != nil {
		ln.Close()
		return e.fail("broker", err)
	}
	mu.Lock()
	fmt.Fprintf(e.stderr, "simrun broker: listening on %s (preset %s, data %s)\n", b.Addr(), presetName, dir)
	mu.Unlock()
	<-ctx.Done()
	logf("stopping (%v)", context.Cause(ctx))
	if err := b.Shutdown(); err != nil {
		logf("stop: %v", err)
	}
	if err := b.Err(); err != nil {
		logf("store failure: %v", err)
		return exitIO
	}
	return exitOK
}

// childEnv set to 1 in a child's environment says it was started by simrun
// itself (the live tester's -broker ours); a test binary then runs main, so
// the tester can start its children from os.Executable() in tests too.
const childEnv = "SIMRUN_CHILD"

// dropLine is the broker's log line for a message copy it discarded
// undelivered: one "dropped" line a copy, key=value fields a tester can
// read (client, reason, for a full queue its bound and policy, topic and
// payload quoted).
func dropLine(d engine.Drop) string {
	limit := ""
	if d.Reason == engine.DropQueueFull {
		limit = fmt.Sprintf(" bound=%d policy=%s", d.Bound, d.Policy)
	}
	return fmt.Sprintf("dropped client=%s reason=%s%s topic=%q msg=%q", d.Client, d.Reason, limit, d.Topic, d.Payload)
}
