package convert

import "unicode"

// CountChars counts the characters of s that carry text: every rune but
// white space. It is the unit of vibe's character accounting (source ->
// converted -> chunked -> cited): line breaks, indentation and the spacing
// of joined lines change in every conversion, the text does not.
func CountChars(s string) int {
	n := 0
	for _, r := range s {
		if !unicode.IsSpace(r) {
			n++
		}
	}
	return n
}

// Aside is a part of a source that vibe left out of the text on purpose,
// named and counted so that the accounting shows it rather than losing it
// silently: a Project Gutenberg licence, a download site's notice, page
// numbers and running heads, a passage repeated word for word.
type Aside struct {
	// Part names what was set aside ("Project Gutenberg licence").
	Part string `yaml:"part" json:"part"`
	// Chars counts its characters ([CountChars]).
	Chars int `yaml:"chars" json:"chars"`
	// Why says why it is not text of the work.
	Why string `yaml:"why" json:"why"`
}

// asideTotal sums the characters of asides.
func asideTotal(asides []Aside) int {
	n := 0
	for _, a := range asides {
		n += a.Chars
	}
	return n
}

// addAside appends an aside of the given text unless it is empty, merging it
// into an earlier aside of the same part.
func addAside(asides []Aside, part, why, text string) []Aside {
	n := CountChars(text)
	if n == 0 {
		return asides
	}
	for i := range asides {
		if asides[i].Part == part {
			asides[i].Chars += n
			return asides
		}
	}
	return append(asides, Aside{Part: part, Chars: n, Why: why})
}
