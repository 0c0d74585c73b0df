package packet

import (
	"errors"
	"testing"
)

// slowHeader is header without its fast path: the full checks in order.
func slowHeader(v Version, buf []byte, maxPacketSize uint32) (Type, byte, int, int, error) {
	if len(buf) == 0 {
		return 0, 0, 0, 0, nil
	}
	t, flags := Type(buf[0]>>4), buf[0]&0x0F
	if err := checkType(v, t, flags); err != nil {
		return 0, 0, 0, 0, err
	}
	rl, used, err := readVBI(v, buf[1:])
	if err != nil || used == 0 {
		return 0, 0, 0, 0, err
	}
	total := 1 + used + rl
	limit := int64(maxPacketSize)
	if limit == 0 {
		limit = MaxPacketSize
	}
	if int64(total) > limit {
		return 0, 0, 0, 0, ErrTooLarge
	}
	return t, flags, 1 + used, total, nil
}

// TestHeaderFastPath checks header against the full checks for every first
// byte, under every version row of its table (and an unsupported one), with
// short, long and multi-byte Remaining Lengths and several size limits.
func TestHeaderFastPath(t *testing.T) {
	seconds := [][]byte{nil, {0}, {1}, {0x7F}, {0x80}, {0x80, 0}, {0x80, 1}, {0xFF, 0x7F}}
	for _, v := range []Version{0, V311, V5, 3} {
		for b := range 256 {
			for _, rest := range seconds {
				for _, max := range []uint32{0, 2, 3, 50, 129, 130, 1000} {
					buf := append([]byte{byte(b)}, rest...)
					gt, gf, gh, gn, gerr := header(v, buf, max)
					wt, wf, wh, wn, werr := slowHeader(v, buf, max)
					if gt != wt || gf != wf || gh != wh || gn != wn || (gerr == nil) != (werr == nil) ||
						(werr != nil && errors.Is(werr, ErrTooLarge) != errors.Is(gerr, ErrTooLarge)) {
						t.Fatalf("header(%v, % x, %d) = %v %d %d %d %v, want %v %d %d %d %v",
							v, buf, max, gt, gf, gh, gn, gerr, wt, wf, wh, wn, werr)
					}
				}
			}
		}
	}
}
