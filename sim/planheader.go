package sim

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/mqttlab/mqttlab/engine"
)

// Policies is a preset's pair of policies without its name and doc: what a
// plan header's policy line carries.
type Policies struct {
	Client engine.ClientPolicy
	Broker engine.BrokerPolicy
}

// textField is one key=value argument of a header line: its key, its value
// as text, and how to read the value back.
type textField struct {
	key    string
	format func() string
	parse  func(string) error
}

// profileFields are the arguments of the faults line, bound to p: every
// Profile field but Doc, in a fixed order.
func profileFields(p *Profile) []textField {
	return []textField{
		nameField("name", &p.Name),
		spanField("latency", &p.LatencyMin, &p.LatencyMax),
		ppmField("chunk", &p.ChunkPPM),
		ppmField("reset", &p.ResetPPM),
		ppmField("halfopen", &p.HalfOpenPPM),
		ppmField("partition", &p.PartitionPPM),
		ppmField("slow", &p.SlowPPM),
		ppmField("crash", &p.CrashPPM),
		ppmField("stateloss", &p.StateLossPPM),
		ppmField("crashpoint", &p.CrashPointPPM),
		ppmField("lose", &p.LoseUnsyncedPPM),
		ppmField("torn", &p.TornPPM),
		spanField("restart", &p.RestartMin, &p.RestartMax),
		spanField("backoff", &p.BackoffMin, &p.BackoffMax),
		durField("slowextra", &p.SlowExtra),
	}
}

// policyFields are the arguments of the policy line, bound to p: every
// ClientPolicy and BrokerPolicy field, in a fixed order.
func policyFields(p *Policies) []textField {
	c, b := &p.Client, &p.Broker
	return []textField{
		enumField("client.retransmit", &c.Retransmit, engine.ParseRetransmitStore),
		enumField("client.unknown-pubrel", &c.UnknownPubrel, engine.ParseUnknownAck),
		enumField("client.unknown-pubrec", &c.UnknownPubrec, engine.ParseUnknownAck),
		enumField("client.ack-order", &c.AckOrder, engine.ParseAckOrder),
		enumField("client.incoming-qos2", &c.IncomingQoS2, engine.ParseQoS2State),
		enumField("client.mutations", &c.Mutations, engine.ParseMutation),
		enumField("broker.persistence", &b.Persistence, engine.ParseBrokerPersistence),
		intField("broker.snapshot-every", &b.SnapshotEvery),
		enumField("broker.unknown-pubrel", &b.UnknownPubrel, engine.ParseUnknownAck),
		enumField("broker.unknown-pubrec", &b.UnknownPubrec, engine.ParseUnknownAck),
		enumField("broker.ack-order", &b.AckOrder, engine.ParseAckOrder),
		enumField("broker.mutations", &b.Mutations, engine.ParseMutation),
	}
}

// nameField is a name: whitespace (which a header line cannot hold) prints
// as "_".
func nameField(key string, v *string) textField {
	return textField{key: key,
		format: func() string {
			return strings.Map(func(r rune) rune {
				if strings.ContainsRune(" \t\r\n\v\f", r) {
					return '_'
				}
				return r
			}, *v)
		},
		parse: func(s string) error { *v = s; return nil }}
}

// ppmField is a probability in parts per million, 0..1000000.
func ppmField(key string, v *int) textField {
	return textField{key: key,
		format: func() string { return strconv.Itoa(*v) },
		parse: func(s string) error {
			n, err := strconv.Atoi(s)
			if err != nil || n < 0 || n > 1_000_000 {
				return fmt.Errorf("%q is not a probability in parts per million (0..1000000)", s)
			}
			*v = n
			return nil
		}}
}

// intField is a non-negative integer.
func intField(key string, v *int) textField {
	return textField{key: key,
		format: func() string { return strconv.Itoa(*v) },
		parse: func(s string) error {
			n, err := strconv.Atoi(s)
			if err != nil || n < 0 {
				return fmt.Errorf("%q is not a non-negative integer", s)
			}
			*v = n
			return nil
		}}
}

// durField is a duration in the plan's format (FormatDuration).
func durField(key string, v *engine.Duration) textField {
	return textField{key: key,
		format: func() string { return FormatDuration(*v) },
		parse: func(s string) error {
			d, err := ParseDuration(s)
			*v = d
			return err
		}}
}

// spanField is a duration range "min..max" (1ms..5ms).
func spanField(key string, lo, hi *engine.Duration) textField {
	return textField{key: key,
		format: func() string { return FormatDuration(*lo) + ".." + FormatDuration(*hi) },
		parse: func(s string) error {
			a, b, ok := strings.Cut(s, "..")
			if !ok {
				return fmt.Errorf("%q is not a range min..max", s)
			}
			var err error
			if *lo, err = ParseDuration(a); err != nil {
				return err
			}
			*hi, err = ParseDuration(b)
			return err
		}}
}

// enumField is a policy value with a text name (engine's String and ParseX).
func enumField[T fmt.Stringer](key string, v *T, parse func(string) (T, error)) textField {
	return textField{key: key,
		format: func() string { return (*v).String() },
		parse: func(s string) error {
			x, err := parse(s)
			*v = x
			return err
		}}
}

// appendFields appends " key=value" for each field.
func appendFields(b *strings.Builder, fields []textField) {
	for _, f := range fields {
		b.WriteByte(' ')
		b.WriteString(f.key)
		b.WriteByte('=')
		b.WriteString(f.format())
	}
}

// parseFields reads key=value arguments into fields: every key exactly once,
// no other.
func parseFields(line string, args []string, fields []textField) error {
	seen := make([]bool, len(fields))
	for _, a := range args {
		key, val, ok := strings.Cut(a, "=")
		i := fieldIndex(fields, key)
		switch {
		case !ok:
			return fmt.Errorf("header %s: argument %q is not key=value", line, a)
		case i < 0:
			return fmt.Errorf("header %s: unknown key %q (known: %s)", line, key, fieldKeys(fields, nil))
		case seen[i]:
			return fmt.Errorf("header %s: key %q given twice", line, key)
		}
		seen[i] = true
		if err := fields[i].parse(val); err != nil {
			return fmt.Errorf("header %s: key %s: %w", line, key, err)
		}
	}
	if missing := fieldKeys(fields, seen); missing != "" {
		return fmt.Errorf("header %s: missing %s (every key is needed to replay the run)", line, missing)
	}
	return nil
}

func fieldIndex(fields []textField, key string) int {
	for i, f := range fields {
		if f.key == key {
			return i
		}
	}
	return -1
}

// fieldKeys lists the keys of the fields not seen (all of them when seen is
// nil), comma-separated.
func fieldKeys(fields []textField, seen []bool) string {
	var keys []string
	for i, f := range fields {
		if seen == nil || !seen[i] {
			keys = append(keys, f.key)
		}
	}
	return strings.Join(keys, ", ")
}

// appendFaultsLine appends the faults line of a custom profile.
func appendFaultsLine(b *strings.Builder, p Profile) {
	b.WriteString("faults")
	appendFields(b, profileFields(&p))
	b.WriteByte('\n')
}

// appendPolicyLine appends the policy line of a preset's policies.
func appendPolicyLine(b *strings.Builder, p Policies) {
	b.WriteString("policy")
	appendFields(b, policyFields(&p))
	b.WriteByte('\n')
}

// parseFaultsLine reads the arguments of a faults line.
func parseFaultsLine(args []string) (*Profile, error) {
	var p Profile
	if err := parseFields("faults", args, profileFields(&p)); err != nil {
		return nil, err
	}
	return &p, nil
}

// parsePolicyLine reads the arguments of a policy line.
func parsePolicyLine(args []string) (*Policies, error) {
	var p Policies
	if err := parseFields("policy", args, policyFields(&p)); err != nil {
		return nil, err
	}
	return &p, nil
}

// headerFaults is the faults line a config needs: its custom profile
// (without Doc, which no run reads), or nil.
func headerFaults(cfg Config) *Profile {
	if cfg.Custom == nil {
		return nil
	}
	p := *cfg.Custom
	p.Doc = ""
	return &p
}

// headerPolicy is the policy line a config needs: its preset's policies
// when they are not those of the named preset of its name (a mutant, a
// custom mix, or a name engine does not know), else nil. A preset without a
// name runs as the default ("fixed"), so it needs none.
func headerPolicy(cfg Config) *Policies {
	pr := cfg.Preset
	if pr.Name == "" {
		return nil
	}
	if named, err := engine.PresetByName(pr.Name); err == nil && named.Client == pr.Client && named.Broker == pr.Broker {
		return nil
	}
	return &Policies{Client: pr.Client, Broker: pr.Broker}
}

// presetOf returns the preset a header asks for: its policy line under its
// preset's name, or the named preset.
func presetOf(h Header) (engine.Preset, error) {
	if h.Policy != nil {
		if h.Preset == "" {
			return engine.Preset{}, fmt.Errorf("%w: a policy line needs a preset name (a \"preset NAME\" line)", ErrConfig)
		}
		return engine.Preset{Name: h.Preset, Client: h.Policy.Client, Broker: h.Policy.Broker}, nil
	}
	p, err := engine.PresetByName(h.Preset)
	if err != nil {
		return engine.Preset{}, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	return p, nil
}
