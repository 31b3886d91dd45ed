package lexical

import (
	"sync"
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
	mu   sync.RWMutex
	seen map[rune]rune
}

// defaultFolder is shared by Tokens; the OpenCC dictionaries are loaded on
// first use and each character is converted once.
var defaultFolder = &Folder{}

// Rune returns the folded form of r; non-Han runes are returned unchanged.
func (f *Folder) Rune(r rune) rune {
	if r < 0x2E80 || !unicode.Is(unicode.Han, r) {
		return r
	}
	f.mu.RLock()
	out, ok := f.seen[r]
	f.mu.RUnlock()
	if ok {
		return out
	}
	out = f.convert(r)
	if v, ok := variants[out]; ok {
		out = v
	}
	f.mu.Lock()
	if f.seen == nil {
		f.seen = map[rune]rune{}
	}
	f.seen[r] = out
	f.mu.Unlock()
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
