package model

// scratch is working memory the checks of one call share: a check that is
// done with a dense pair table hands it back (releasePairs) and the next
// check's newPairs takes it, cleared, instead of allocating its own. It
// holds no pointer into a history.
type scratch struct {
	i32   [][]int32 // spare dense tables of pairs[int32]
	bools [][]bool  // spare dense tables of pairs[bool]
}

// withScratch returns a copy of x with a scratch of its own: the checks of
// one call on the copy share memory, and x itself is never modified (an
// Indexed may serve calls at the same time).
func (x *index) withScratch() *index {
	c := *x
	c.sc = new(scratch)
	return &c
}

// takeDense returns a zeroed table of n entries: a spare of x's scratch if
// one is long enough, else a new one.
func takeDense[T comparable](x *index, n int) []T {
	if x.sc != nil {
		var zero []T
		switch any(zero).(type) {
		case []int32:
			if b, ok := takeSpare(&x.sc.i32, n); ok {
				return any(b).([]T)
			}
		case []bool:
			if b, ok := takeSpare(&x.sc.bools, n); ok {
				return any(b).([]T)
			}
		}
	}
	return make([]T, n)
}

// takeSpare pops the last spare of *spares if it holds n entries, cleared.
func takeSpare[E any](spares *[][]E, n int) ([]E, bool) {
	s := *spares
	if len(s) == 0 || cap(s[len(s)-1]) < n {
		return nil, false
	}
	b := s[len(s)-1][:n]
	*spares = s[:len(s)-1]
	clear(b)
	return b, true
}

// releasePairs hands p's dense table to x's scratch; p must not be used
// after.
func releasePairs[T comparable](x *index, p *pairs[T]) {
	if x.sc == nil || p.dense == nil {
		return
	}
	switch b := any(p.dense).(type) {
	case []int32:
		x.sc.i32 = append(x.sc.i32, b)
	case []bool:
		x.sc.bools = append(x.sc.bools, b)
	}
	p.dense = nil
}
