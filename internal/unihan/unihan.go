// Package unihan is vibe's built-in table of English glosses of Han
// characters, derived from the Unicode Han Database (Unihan, the
// kDefinition field of Unihan_Readings.txt, Unicode 15.0.0). Offline, it
// gives the glossary of a theme written in Chinese the English words of
// its terms' characters (docs/glossary.md), when the user names no
// dictionary of their own. The data is © Unicode, Inc., under the Unicode
// License v3 (LICENSE in this directory); it was modified: the
// definitions were cut into glosses and filtered (CleanDefinition).
// README.md says where the data comes from and how to make it again.
package unihan

import (
	"bufio"
	"bytes"
	"compress/gzip"
	_ "embed"
	"regexp"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

//go:generate go run ./gen -in /tmp/unihan/usr/share/unicode/Unihan_Readings.txt.bz2 -out glosses.tsv.gz

// glossesGz is the table: one line a character, `字\tgloss|gloss|...`,
// gzip-compressed.
//
//go:embed glosses.tsv.gz
var glossesGz []byte

// MaxGlosses is how many glosses of a character the table keeps at most,
// in the order of the definition (its commonest senses first).
const MaxGlosses = 10

// MaxGlossWords bounds a gloss: a longer one is an explanation, not a word
// a question names the character by.
const MaxGlossWords = 6

var (
	once   sync.Once
	table  map[rune][]string
	tabErr error
)

// Glosses returns the English glosses of a Han character, none for one
// the table lacks. The table is read from the binary on the first call.
// The slice is shared: callers must not change it.
func Glosses(r rune) []string {
	once.Do(load)
	return table[r]
}

// Words returns the English words of all the table's glosses, lower-cased
// (each maximal run of the letters a to z: "thorough-fare" holds
// "thorough" and "fare"): a vocabulary of everyday English words, with
// some romanized names among them ("guishui", a river). It is built on
// the first call and shared: callers must not change it.
func Words() map[string]bool {
	wordsOnce.Do(func() {
		once.Do(load)
		words = map[string]bool{}
		for _, gs := range table {
			for _, g := range gs {
				for _, w := range strings.FieldsFunc(strings.ToLower(g), func(r rune) bool { return r < 'a' || r > 'z' }) {
					words[w] = true
				}
			}
		}
	})
	return words
}

var (
	wordsOnce sync.Once
	words     map[string]bool
)

// Len is the number of characters in the table.
func Len() int {
	once.Do(load)
	return len(table)
}

func load() {
	table = map[rune][]string{}
	zr, err := gzip.NewReader(bytes.NewReader(glossesGz))
	if err != nil {
		panic("unihan: the embedded table is no gzip file: " + err.Error())
	}
	sc := bufio.NewScanner(zr)
	for sc.Scan() {
		c, gs, ok := strings.Cut(sc.Text(), "\t")
		r, n := utf8.DecodeRuneInString(c)
		if !ok || n != len(c) {
			continue
		}
		table[r] = strings.Split(gs, "|")
	}
	if err := sc.Err(); err != nil {
		panic("unihan: the embedded table is unreadable: " + err.Error())
	}
}

// Kept reports whether the table keeps a character: CJK Unified
// Ideographs and Extension A (U+4E00–U+9FFF, U+3400–U+4DBF), which hold
// the characters of the books vibe reads; the supplementary planes'
// extensions and the compatibility ideographs are left out to keep the
// binary small.
func Kept(r rune) bool {
	return (r >= 0x4E00 && r <= 0x9FFF) || (r >= 0x3400 && r <= 0x4DBF)
}

var (
	parenthetical = regexp.MustCompile(`\([^()]*\)`)
	// noGloss are glosses that name no sense of the character: its radical
	// number, a surname, its place among the stems and branches (the
	// character is named by its pinyin: "Jia wood"), a reference to
	// another character, a transliteration.
	noGloss = regexp.MustCompile(`(?i)^((a |the )?surname|kangxi radical\b.*|radical( number)? \d+.*|\d+(st|nd|rd|th) (heavenly stem|terrestrial branch|earthly branch)|(an? )?(variant|same as|ancient form|non-classical form|corrupted form|simplified form|abbreviated form|standard form|interchangeable|used in|used for|used as|see|phonetic|transliteration|-\w+)\b.*)$`)
	leading = regexp.MustCompile(`(?i)^(to|a|an|the) `)
	// quote is a quotation mark around a word ("'male' principle",
	// "“and so forth”").
	quote = regexp.MustCompile(`(^|\s)['"“”‘’]|['"“”‘’](\s|$)`)
)

// CleanDefinition cuts a kDefinition value into glosses, the words a
// question names the character by: senses are separated by ';' and ','
// (TR38); remarks in parentheses are dropped, and with them a sense marked
// Cantonese only ("(Cant.)"); a radical number, a surname, an ordinal of
// the stems and branches, a reference to another character ("same as",
// "variant of" and U+ code points) and a gloss of more than MaxGlossWords
// words are no glosses; a leading "to", "a", "an" or "the" is dropped. At
// most MaxGlosses, without repeats.
//
//	"eat; meal; food; Kangxi radical 184" → eat, meal, food
//	"tiger; brave, fierce; surname"       → tiger, brave, fierce
func CleanDefinition(def string) []string {
	var out []string
	for _, sense := range strings.Split(def, ";") {
		if strings.Contains(sense, "(Cant.)") {
			continue
		}
		for parenthetical.MatchString(sense) {
			sense = parenthetical.ReplaceAllString(sense, " ")
		}
		for _, g := range strings.Split(sense, ",") {
			g = quote.ReplaceAllString(g, " ")
			g = strings.Join(strings.Fields(g), " ")
			g = strings.Trim(g, " .:")
			for leading.MatchString(g) {
				g = leading.ReplaceAllString(g, "")
			}
			if g == "" || noGloss.MatchString(g) || strings.Contains(g, "U+") || strings.ContainsAny(g, "()[]|") ||
				strings.IndexFunc(g, func(r rune) bool { return unicode.Is(unicode.Han, r) }) >= 0 ||
				len(strings.Fields(g)) > MaxGlossWords {
				continue
			}
			r, n := utf8.DecodeRuneInString(g)
			g = string(unicode.ToLower(r)) + g[n:]
			dup := false
			for _, o := range out {
				dup = dup || o == g
			}
			if !dup {
				out = append(out, g)
			}
			if len(out) == MaxGlosses {
				return out
			}
		}
	}
	return out
}
