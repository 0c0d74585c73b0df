package brokerfuzz

// v311to5 maps the codec's 3.1.1 rule ids to the 5.0 ids of the same
// statement: the pairs of engine/packet's rule(v, v311, v5) calls.
var v311to5 = map[string]string{
	"MQTT-2.2.2-1":  "MQTT-2.1.3-1", // reserved fixed-header flags
	"MQTT-1.5.3-1":  "MQTT-1.5.4-1", // ill-formed UTF-8
	"MQTT-1.5.3-2":  "MQTT-1.5.4-2", // U+0000 in a string
	"MQTT-2.3.1-1":  "MQTT-2.2.1-3", // packet id 0 in PUBLISH, SUBSCRIBE, UNSUBSCRIBE
	"MQTT-2.3.1-5":  "MQTT-2.2.1-2",
	"MQTT-2.3.1-6":  "MQTT-2.2.1-5",
	"MQTT-2.3.1-7":  "MQTT-2.2.1-6",
	"MQTT-3.8.3-3":  "MQTT-3.8.3-2", // SUBSCRIBE without a filter
	"MQTT-4.7.1-2":  "MQTT-4.7.1-1", // "#" last in a filter
	"MQTT-4.7.1-3":  "MQTT-4.7.1-2", // "+" a whole level
	"MQTT-3.1.2-13": "MQTT-3.1.2-11",
	"MQTT-3.1.2-14": "MQTT-3.1.2-12",
	"MQTT-3.1.2-15": "MQTT-3.1.2-13",
	"MQTT-3.1.2-18": "MQTT-3.1.2-16",
	"MQTT-3.1.2-20": "MQTT-3.1.2-18",
	"MQTT-3.2.2-4":  "MQTT-3.2.2-6",
}

// Canon is the 5.0 id of rule, a rule of version v: a 3.1.1 id the codec
// numbers differently in 5.0 is mapped; every other id is returned as is.
func Canon(rule string, v byte) string {
	if r, ok := v311to5[rule]; ok && v != 5 {
		return r
	}
	return rule
}
