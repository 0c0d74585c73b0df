package model

import (
	"fmt"
	"slices"
	"strings"
)

// SubscriptionIDs is judged in the routing pass (routing.go): every first
// PUBLISH the broker sends a v5 client carries exactly the Subscription
// Identifiers of the subscriptions it is sent for. The session's one copy
// for its ordinary subscriptions carries the identifier of each of them
// that matches the topic [MQTT-3.3.4-3] [MQTT-3.3.4-4]; a copy for a shared
// subscription (sent to this member alone) carries that subscription's
// [MQTT-3.3.4-5]. A subscription counts with the identifier its
// acknowledged SUBSCRIBE carried, replaced by the next one's and dropped at
// its UNSUBACK. Doubt goes to the broker: an identifier the subscription
// may have had since the message was routed (an unacknowledged SUBSCRIBE or
// UNSUBSCRIBE, a replaced identifier, a removed subscription) may be sent
// and need not be; only an identifier the subscription held, acknowledged,
// from before the routing until the send must be.

// subIDState is what the routing pass knows of a subscription's
// identifier.
type subIDState struct {
	ids   []uint32 // the identifiers it may carry now
	sure  uint32   // the identifier it surely carries (0: none, or in doubt)
	since int32    // the SUBACK from which sure holds
	doubt bool     // a SUBSCRIBE with another identifier awaits its SUBACK
}

// retiredID is an identifier a subscription of filter may have carried
// until step until (an UNSUBACK, or a SUBACK that replaced it).
type retiredID struct {
	filter string
	id     uint32
	until  int32
}

// subIDRequest notes a SUBSCRIBE's identifier on the subscription it may
// change.
func (st *subIDState) subIDRequest(p *Packet) {
	id := subscribeID(p)
	if id != 0 && !slices.Contains(st.ids, id) {
		st.ids = append(st.ids, id)
	}
	if id != st.sure {
		st.doubt = true
	}
}

// subscribeID is the Subscription Identifier of a SUBSCRIBE, 0 for none.
func subscribeID(p *Packet) uint32 {
	if len(p.SubIDs) == 0 {
		return 0
	}
	return p.SubIDs[0]
}

// retire keeps the identifiers sub may have carried until step i, but keep.
func (r *routeClient) retire(filter string, sub *routeSub, i int, keep uint32) {
	if sub == nil {
		return
	}
	for _, id := range sub.id.ids {
		if id != keep {
			r.retired = append(r.retired, retiredID{filter: filter, id: id, until: int32(i)})
		}
	}
}

// granted returns the identifier state of a subscription its SUBACK at
// step i granted for req, which replaces old (nil: a new one).
func granted(old *routeSub, req *Packet, i int) subIDState {
	id := subscribeID(req)
	st := subIDState{sure: id, since: int32(i)}
	if id != 0 {
		st.ids = []uint32{id}
	}
	if old != nil && !old.maybe && !old.id.doubt && old.id.sure == id {
		st.since = old.id.since // unchanged
	}
	return st
}

// refused restores the identifier state of a subscription whose SUBSCRIBE
// the broker refused: it keeps the identifier it had.
func (st *subIDState) refused() {
	st.ids, st.doubt = st.ids[:0], false
	if st.sure != 0 {
		st.ids = append(st.ids, st.sure)
	}
}

// subIDSet is what a copy's identifiers must and may hold: must ⊆ sent ⊆ may.
type subIDSet struct {
	must, may []uint32
	cite      []int
	what      string // the subscriptions, for the reason
}

// add counts a subscription of filter f in the set, for a copy routed
// first at step from.
func (s *subIDSet) add(f string, sub *routeSub, from int32) {
	for _, id := range sub.id.ids {
		if !slices.Contains(s.may, id) {
			s.may = append(s.may, id)
		}
	}
	if id := sub.id.sure; id != 0 && !sub.maybe && !sub.id.doubt && sub.id.since <= from {
		if !slices.Contains(s.must, id) {
			s.must = append(s.must, id)
			s.cite = append(s.cite, int(sub.id.since))
		}
	}
	if s.what != "" {
		s.what += ", "
	}
	s.what += f
}

// addRetired counts the identifiers of filters f (as keep tells) retired
// after step from.
func (s *subIDSet) addRetired(r *routeClient, from int32, keep func(f string) bool) {
	for _, ret := range r.retired {
		if ret.until >= from && keep(ret.filter) && !slices.Contains(s.may, ret.id) {
			s.may = append(s.may, ret.id)
		}
	}
}

// fits reports whether sent holds every identifier of must and none
// outside may, and what it lacks or has beyond.
func (s *subIDSet) fits(sent []uint32) (missing, extra []uint32) {
	for _, id := range s.must {
		if !slices.Contains(sent, id) {
			missing = append(missing, id)
		}
	}
	for _, id := range sent {
		if !slices.Contains(s.may, id) && !slices.Contains(extra, id) {
			extra = append(extra, id)
		}
	}
	return missing, extra
}

// judgeSubIDs judges the Subscription Identifiers of a first PUBLISH to
// v5 client c, a copy first routed at step from: the session's copy for
// its ordinary subscriptions (when ordinary: one of them matched) or a
// copy for one of its matching shared subscriptions.
func (s *routeState) judgeSubIDs(i int, r *routeClient, e *Event, from int32, ordinary bool) {
	if !r.v5 || (!r.hasIDs && len(e.Packet.SubIDs) == 0) {
		return // no identifier asked for nor sent: nothing to judge
	}
	p := &e.Packet
	topic := p.Topic
	var first *subIDSet
	try := func(set *subIDSet) bool {
		if missing, extra := set.fits(p.SubIDs); len(missing) == 0 && len(extra) == 0 {
			return true
		}
		if first == nil {
			first = set
		}
		return false
	}
	if ordinary {
		set := &subIDSet{}
		for _, f := range sortedSubs(r) {
			if _, shared := sharedInner(f); !shared && Matches(f, topic) {
				set.add(f, r.subs[f], from)
			}
		}
		set.addRetired(r, from, func(f string) bool { _, sh := sharedInner(f); return !sh && Matches(f, topic) })
		if try(set) {
			return
		}
	}
	for _, f := range sharedFilters(r, topic, from) {
		set := &subIDSet{what: f}
		if sub := r.subs[f]; sub != nil {
			set = &subIDSet{}
			set.add(f, sub, from)
		}
		set.addRetired(r, from, func(g string) bool { return g == f })
		if try(set) {
			return
		}
	}
	if first == nil {
		return // no subscription it could be for: Unsubscribe judges the copy
	}
	missing, extra := first.fits(p.SubIDs)
	rule := "[MQTT-3.3.4-3] [MQTT-3.3.4-4]"
	if strings.HasPrefix(first.what, sharePrefix) {
		rule = "[MQTT-3.3.4-5]"
	}
	var why []string
	if len(missing) > 0 {
		why = append(why, fmt.Sprintf("lacks %s", idList(missing)))
	}
	if len(extra) > 0 {
		why = append(why, fmt.Sprintf("has %s, which none of them carries", idList(extra)))
	}
	s.add(i, append(first.cite, int(from)), SubscriptionIDs, "msg %q sent to %s with Subscription Identifiers %s; its matching subscriptions (%s) carry %s: it %s %s",
		p.Msg, e.Peer, idList(p.SubIDs), first.what, idList(first.must), strings.Join(why, " and "), rule)
}

// sortedSubs returns the client's subscription filters in order.
func sortedSubs(r *routeClient) []string {
	fs := make([]string, 0, len(r.subs))
	for f := range r.subs {
		fs = append(fs, f)
	}
	slices.Sort(fs)
	return fs
}

// sharedFilters returns the client's shared subscription filters (held
// now, or retired after step from) whose filter matches topic, in order.
func sharedFilters(r *routeClient, topic string, from int32) []string {
	var out []string
	add := func(f string) {
		if inner, ok := sharedInner(f); ok && Matches(inner, topic) && !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	for f := range r.subs {
		add(f)
	}
	for _, ret := range r.retired {
		if ret.until >= from {
			add(ret.filter)
		}
	}
	slices.Sort(out)
	return out
}

// idList formats identifiers as "[7 9]", sorted.
func idList(ids []uint32) string {
	s := slices.Clone(ids)
	slices.Sort(s)
	return fmt.Sprint(s)
}
