package integrate

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/mozillazg/go-pinyin"

	"github.com/vibelife/vibe/internal/unihan"
	"github.com/vibelife/vibe/skills"
)

// A Chinese–English dictionary in the CC-CEDICT format, the user's own
// (vibe.yaml glossary.dictionary, docs/glossary.md): offline, it gives the
// mined terms of a theme written in Chinese their English renderings (桃花
// → peach blossom), and the glossary's characters their English words (七
// seven, 杀 kill), so that a question naming a term in translation or half
// in pinyin ("the eating god", "Jia wood") reaches it. vibe ships no
// dictionary of terms (CC-CEDICT is CC BY-SA and 9 MB), but a table of
// the characters' English glosses from the Unicode Han Database
// (BuiltinDictionary), used when the user names no dictionary and for the
// characters the user's lacks.

// Dictionary is a parsed CC-CEDICT file: each headword (simplified and
// traditional) with its English glosses, cleaned.
type Dictionary struct {
	// glosses are renderings (maxGlossWords words at most), long the
	// glosses of up to maxCharGlossWords words, the words a character is
	// named by ("generic term for lustrous and ductile metals" names 金).
	glosses, long map[string][]string
	// builtin is set when the built-in table of the Unicode Han Database
	// (internal/unihan) gives the characters long lacks their glosses.
	builtin bool
}

// BuiltinDictionary is the dictionary vibe uses when the user names none:
// the English glosses of each character from the Unicode Han Database
// (internal/unihan: 杀 kill, slaughter, murder, hurt), and no renderings
// of terms.
func BuiltinDictionary() *Dictionary {
	return &Dictionary{builtin: true}
}

// WithBuiltin returns d with the built-in table's glosses for the
// characters d lacks: a character d has keeps d's glosses alone.
func (d *Dictionary) WithBuiltin() *Dictionary {
	if d == nil {
		return BuiltinDictionary()
	}
	out := *d
	out.builtin = true
	return &out
}

// Dictionary sizes: at most maxTermGlosses renderings of a term, and
// maxCharGlosses glosses of a character; a gloss of more than
// maxGlossWords words is a definition, not a rendering of a term.
const (
	maxTermGlosses = 4
	maxCharGlosses = 10
	maxGlossWords  = 4
	// maxCharGlossWords bounds a character's gloss: a longer one is an
	// explanation.
	maxCharGlossWords = 8
)

// cedictLine is one entry: traditional, simplified, [pinyin], /glosses/.
var cedictLine = regexp.MustCompile(`^(\S+) (\S+) \[([^\]]*)\] /(.*)/\s*$`)

// LoadDictionary reads a CC-CEDICT file.
func LoadDictionary(path string) (*Dictionary, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("dictionary: %w", err)
	}
	defer f.Close()
	return ParseDictionary(f, path)
}

// ParseDictionary reads a dictionary in the CC-CEDICT format: lines
// `傳統 传统 [chuan2 tong3] /tradition/traditional/`, comments starting with
// #. where names the file in errors; a line of another format is an error
// naming it.
func ParseDictionary(r io.Reader, where string) (*Dictionary, error) {
	d := &Dictionary{glosses: map[string][]string{}, long: map[string][]string{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimRight(sc.Text(), "\r")
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		m := cedictLine.FindStringSubmatch(line)
		if m == nil {
			return nil, fmt.Errorf("%s:%d: not a CC-CEDICT entry (want `傳統 传统 [chuan2 tong3] /tradition/`): %.60q", where, n, line)
		}
		var gs, long []string
		for _, g := range strings.Split(m[4], "/") {
			if g := cleanGloss(g, maxGlossWords); g != "" {
				gs = append(gs, g)
			}
			if g := cleanGloss(g, maxCharGlossWords); g != "" {
				long = append(long, g)
			}
		}
		for _, head := range dedupe([]string{m[2], m[1]}) {
			for _, g := range gs {
				if !slicesHas(d.glosses[head], g) {
					d.glosses[head] = append(d.glosses[head], g)
				}
			}
			if utf8.RuneCountInString(head) == 1 {
				for _, g := range long {
					if !slicesHas(d.long[head], g) {
						d.long[head] = append(d.long[head], g)
					}
				}
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	if len(d.glosses)+len(d.long) == 0 {
		return nil, fmt.Errorf("%s: no CC-CEDICT entry in it (want lines `傳統 传统 [chuan2 tong3] /tradition/`)", where)
	}
	return d, nil
}

func slicesHas(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// glossNoise are glosses that are no rendering: cross-references, names,
// classifiers, readings.
var glossNoise = regexp.MustCompile(`(?i)^(surname|(old |archaic )?variant of|abbr\.|cl:|kangxi radical|used in|see |also written|also pr\.|taiwan pr\.|erhua|pr\. |\(onom\.\)|\(bound form\)|(japanese|korean) )`)

// parenthetical is a remark in parentheses.
var parenthetical = regexp.MustCompile(`\s*\([^)]*\)\s*`)

// cleanGloss returns a gloss as a rendering ("to kill" is "kill", "peach
// blossom" stays), "" for a gloss that is no rendering or longer than
// maxWords words.
func cleanGloss(g string, maxWords int) string {
	g = strings.TrimSpace(g)
	if g == "" || glossNoise.MatchString(g) || strings.ContainsAny(g, "[]|") {
		return ""
	}
	g = strings.TrimSpace(parenthetical.ReplaceAllString(g, " "))
	g = strings.TrimPrefix(g, "to ")
	g = strings.Trim(g, " ,;.")
	if g == "" || len(strings.Fields(g)) > maxWords {
		return ""
	}
	return g
}

// English returns the renderings of a term the dictionary gives as a
// headword (桃花: peach blossom), at most maxTermGlosses; none for a term it
// lacks or a single character.
func (d *Dictionary) English(term string) []string {
	if d == nil || utf8.RuneCountInString(term) < minTermRunes {
		return nil
	}
	gs := d.glosses[term]
	if len(gs) > maxTermGlosses {
		gs = gs[:maxTermGlosses]
	}
	return append([]string(nil), gs...)
}

// Characters returns, for each Han character of the terms, its English
// glosses (at most maxCharGlosses) and its pinyin readings without tones:
// the words a question may name it by, one per character ("seven killings"
// is 七杀, "Jia wood" 甲木). Characters the dictionary lacks are left out;
// with the built-in table (BuiltinDictionary, WithBuiltin), a character
// it gives no gloss keeps its pinyin (庚, "7th heavenly stem": "Geng
// metal" is 庚金).
func (d *Dictionary) Characters(terms []string) map[string]skills.GlossaryChar {
	if d == nil {
		return nil
	}
	out := map[string]skills.GlossaryChar{}
	plain := pinyin.NewArgs()
	plain.Heteronym = true
	for _, t := range terms {
		for _, r := range t {
			c := string(r)
			if _, done := out[c]; done || !isHanOnly(c) {
				continue
			}
			gs := d.long[c]
			if len(gs) == 0 && d.builtin {
				gs = unihan.Glosses(r)
			}
			if len(gs) == 0 && !d.builtin {
				continue
			}
			if len(gs) > maxCharGlosses {
				gs = gs[:maxCharGlosses]
			}
			e := skills.GlossaryChar{English: append([]string(nil), gs...)}
			if py := pinyin.Pinyin(c, plain); len(py) == 1 {
				e.Pinyin = dedupe(py[0])
			}
			if len(e.English)+len(e.Pinyin) == 0 {
				continue
			}
			out[c] = e
		}
	}
	return out
}

// withDictionary gives the glossary's entries without English renderings
// the dictionary's (mined entries: the model's and the hand-kept ones keep
// theirs), and the glossary its characters' words.
func withDictionary(g skills.Glossary, d *Dictionary) skills.Glossary {
	if d == nil {
		return g
	}
	var terms []string
	for i, t := range g.Terms {
		if len(t.English) == 0 && t.From == skills.FromMined {
			g.Terms[i].English = d.English(t.Term)
		}
		terms = append(terms, t.Term)
		terms = append(terms, t.Aliases...)
	}
	g.Characters = d.Characters(terms)
	return g
}
