package lexical

import (
	"sync"
	"sync/atomic"
	"unicode"

	"github.com/longbridgeapp/opencc"
)

// Version identifies how text becomes index tokens. Ingest mixes it into a
// document's content hash, so raising it makes every store re-index its
// documents on the next `vibe build` (version 2: characters folded by
// [Folder]).
const Version = 2

// variants maps variant characters that OpenCC's traditional-to-simplified
// table keeps apart, but which the classical books use for the same word,
// to the form the index keeps: 食神制煞 and 食神制杀 are the same rule.
var variants = map[rune]rune{
	'煞': '杀', // 七煞 / 七杀, 制煞 / 制杀
	'剋': '克', // 相剋 / 相克
	'尅': '克',
	'夀': '寿',
	'壻': '婿',
	'姪': '侄',
}

// Folder folds Han characters to one form before they are indexed or
// searched: traditional to simplified by OpenCC's t2s conversion (the
// maintained table the OpenCC project ships), then the variants above. It
// is safe for concurrent use and caches each character's fold.
type Folder struct {
	once sync.Once
	cc   *opencc.OpenCC
	err  error
	// bmp holds, for each rune from bmpBase up to the end of the Basic
	// Multilingual Plane, its fold plus one once known (0: not yet): read
	// without a lock, since every search folds each CJK rune it scans.
	bmp  [0x10000 - bmpBase]atomic.Int32
	mu   sync.RWMutex
	seen map[rune]rune // folds of runes beyond the BMP
}

// bmpBase is the first rune that may be Han (CJK Radicals Supplement).
const bmpBase = 0x2E80

// defaultFolder is shared by Tokens; the OpenCC dictionaries are loaded on
// first use and each character is converted once.
var defaultFolder = &Folder{}

// Rune returns the folded form of r; non-Han runes are returned unchanged.
func (f *Folder) Rune(r rune) rune {
	if r < bmpBase {
		return r
	}
	if r < 0x10000 {
		slot := &f.bmp[r-bmpBase]
		if v := slot.Load(); v != 0 {
			return rune(v - 1)
		}
		out := r
		if unicode.Is(unicode.Han, r) {
			out = f.fold(r)
		}
		slot.Store(int32(out) + 1)
		return out
	}
	if !unicode.Is(unicode.Han, r) {
		return r
	}
	f.mu.RLock()
	out, ok := f.seen[r]
	f.mu.RUnlock()
	if ok {
		return out
	}
	out = f.fold(r)
	f.mu.Lock()
	if f.seen == nil {
		f.seen = map[rune]rune{}
	}
	f.seen[r] = out
	f.mu.Unlock()
	return out
}

// fold is the folded form of the Han rune r: OpenCC's, then the variants'.
func (f *Folder) fold(r rune) rune {
	out := f.convert(r)
	if v, ok := variants[out]; ok {
		out = v
	}
	return out
}

// convert is OpenCC's t2s for the single character r, or r itself when the
// conversion is unavailable or does not give exactly one character.
func (f *Folder) convert(r rune) rune {
	f.once.Do(func() { f.cc, f.err = opencc.New("t2s") })
	if f.err != nil {
		return r
	}
	s, err := f.cc.Convert(string(r))
	if err != nil {
		return r
	}
	rs := []rune(s)
	if len(rs) != 1 {
		return r
	}
	return rs[0]
}

// Err reports why the OpenCC table could not be loaded, if it could not;
// folding then falls back to the variant table alone.
func (f *Folder) Err() error {
	f.once.Do(func() { f.cc, f.err = opencc.New("t2s") })
	return f.err
}

// Fold returns text with every Han character folded (see [Folder]).
func Fold(text string) string {
	rs := []rune(text)
	for i, r := range rs {
		rs[i] = defaultFolder.Rune(r)
	}
	return string(rs)
}
