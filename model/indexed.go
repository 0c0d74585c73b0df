package model

// Indexed is a history indexed once for several questions about it. A judge
// that asks FaultsOf, Promises and Check of one history pays for the index
// (and, when it builds the History from a compact log, for the History)
// once instead of once per call:
//
//	ix := model.IndexOf(h)
//	only := model.Promises(p, ix.Faults())
//	vs := ix.Check(model.Options{Only: only})
//
// Its answers are exactly those of FaultsOf, Check and CheckPromised on the
// same history. The index keeps h's events (it does not copy them): they
// must not change while the Indexed is in use. An Indexed is never
// modified by its methods, so one value may serve any number of calls.
type Indexed struct {
	h History
	x *index
}

// IndexOf indexes h.
func IndexOf(h History) *Indexed {
	ix := &Indexed{h: h}
	ix.x = newIndex(&ix.h)
	return ix
}

// Faults is FaultsOf of the indexed history.
func (ix *Indexed) Faults() Faults { return faultsOf(ix.x) }

// Check is Check of the indexed history.
func (ix *Indexed) Check(opts Options) []Violation {
	x := ix.x.withScratch()
	vs := check(x, opts)
	x.release()
	return vs
}

// CheckPromised is CheckPromised of the indexed history.
func (ix *Indexed) CheckPromised(p Policy) []Violation {
	x := ix.x.withScratch()
	vs := check(x, Options{Only: Promises(p, faultsOf(x))})
	x.release()
	return vs
}
