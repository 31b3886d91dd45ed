package knowledge

import (
	"testing"
	"unicode/utf8"
)

// TestDecode3IsUTF8: decode3 decodes every three-byte string starting with
// a byte past ASCII as utf8.DecodeRuneInString (what ranging over a string
// gives), or says it does not (width 0), for all 2^24 of them, and at the
// end of a shorter string.
func TestDecode3IsUTF8(t *testing.T) {
	var b [3]byte
	for x := 0; x < 1<<24; x++ {
		b[0], b[1], b[2] = byte(x), byte(x>>8), byte(x>>16)
		if b[0] < utf8.RuneSelf {
			continue
		}
		s := string(b[:])
		r, n := decode3(s)
		wr, wn := utf8.DecodeRuneInString(s)
		if n != 0 && (r != wr || n != wn) || n == 0 && wn == 3 {
			t.Fatalf("% x: decode3 %U %d, utf8 %U %d", b, r, n, wr, wn)
		}
	}
	for _, s := range []string{"\xe4", "\xe4\xbd", "一"[:2]} {
		if _, n := decode3(s); n != 0 {
			t.Errorf("%q: width %d, want 0", s, n)
		}
	}
}
