package sim

// The swarm's features that no dimension turned on before issue 21, drawn
// from the stream planGen.more after the exhaust dimension (a seed that
// draws them off keeps its plan):
//
//   - aliases: the broker's outbound Topic Aliases (BrokerConfig.
//     TopicAliasesOut, "node broker aliases=N", 2-4 per connection) and
//     each v5 client's Topic Alias Maximum ("node s1 aliases=N", 0-3), so
//     the broker names topics by alias, alone after the first PUBLISH of a
//     connection, and TopicAlias judges them [MQTT-3.3.2-11]
//     [MQTT-3.3.2-7] [MQTT-3.1.2-27].
//   - dollar: topics starting with '$' beside the others: publishers
//     publish to $d/a and $d/c/x too, subscribers may subscribe to $d/#,
//     $d/+ or the topics, and the wildcards +/c/x and +/a sit beside # and
//     +/a: wildcards at the first level never match a $ topic
//     [MQTT-4.7.2-1], which DollarTopics judges.

// The share of seeds that draws each of these dimensions on: one in 4.
const moreDen = 4

// dollarTopics and dollarWildcards replace swarmTopics and swarmWildcards
// when the dollar dimension is on: the same lists, then the $ ones.
var (
	dollarTopics    = append(append([]string{}, swarmTopics...), "$d/a", "$d/c/x")
	dollarWildcards = append(append([]string{}, swarmWildcards...), "$d/#", "$d/+", "+/c/x")
)

// drawMore draws the aliases and dollar dimensions (and the alias
// maxima), once the clients are drawn.
func (s *swarmGen) drawMore() {
	m := s.more
	s.aliases = s.wl.on(dimAliases, m, 1, moreDen)
	s.dollar = s.wl.on(dimDollar, m, 1, moreDen)
	if s.aliases {
		s.aliasesOut = uint16(2 + m.IntN(3))
		for _, c := range append(s.all(), s.members...) {
			if c.version == 5 {
				c.cfg.Aliases = uint16(m.IntN(4))
			}
		}
	}
	if s.dollar {
		s.topics, s.wildcardList = dollarTopics, dollarWildcards
	}
}
