package chunk

import (
	"fmt"
	"strings"

	"github.com/vibelife/vibe/convert"
)

// Accounting says where the characters of a converted document went when it
// was cut into chunks: into the chunks the store keeps, into headings over
// no text of their own (they stay in the heading paths), into navigation set
// apart (a contents list), or nowhere. Characters are counted as
// [convert.CountText] counts them: white space and Markdown's marks aside.
type Accounting struct {
	// Converted counts the characters of the converted body.
	Converted int `json:"converted"`
	// Chunked counts the body's characters inside the chunks that are kept
	// (navigation chunks are not); a character two chunks share (overlap)
	// counts once.
	Chunked int `json:"chunked"`
	// InHeadings counts the characters of heading lines that head no text
	// of their own: no chunk holds them, the heading paths of the chunks
	// below them do.
	InHeadings int `json:"in_headings,omitempty"`
	// Aside lists the navigation set apart (contents lists), with its size.
	Aside []convert.Aside `json:"aside,omitempty"`
	// Lost counts the characters in no chunk, heading or navigation.
	Lost int `json:"lost,omitempty"`
	// LostParts says where the lost characters were (the first few spans).
	LostParts []LostPart `json:"lost_parts,omitempty"`
}

// LostPart is a span of a document no chunk holds.
type LostPart struct {
	// Where is the heading path above the span (or "the start").
	Where string `json:"where"`
	Chars int    `json:"chars"`
	// Sample is the span's first characters.
	Sample string `json:"sample"`
}

// Held counts what the chunks hold of the document: the characters in kept
// chunks and in the headings over them.
func (a Accounting) Held() int { return a.Chunked + a.InHeadings }

// SetAside counts the characters of the navigation set apart.
func (a Accounting) SetAside() int {
	n := 0
	for _, x := range a.Aside {
		n += x.Chars
	}
	return n
}

// Share is the share of the converted characters the chunks hold (1 for an
// empty document).
func (a Accounting) Share() float64 {
	if a.Converted == 0 {
		return 1
	}
	return float64(a.Held()) / float64(a.Converted)
}

// maxLostParts bounds how many lost spans an Accounting names.
const maxLostParts = 5

// Account compares a converted file (data, front matter included) with the
// chunks [Splitter.SplitFile] made of it, navigation chunks included.
func Account(data []byte, chunks []Chunk) (Accounting, error) {
	_, bodyOff, err := convert.Parse(data)
	if err != nil {
		return Accounting{}, err
	}
	runes := []rune(string(data))
	const (
		none = iota
		kept
		nav
	)
	mark := make([]uint8, len(runes))
	asideOf := make([]int, len(runes)) // index+1 into the asides, for navigation
	var asides []convert.Aside
	prevNav := ""
	for _, c := range chunks {
		if c.Start < 0 || c.End > len(runes) || c.Start > c.End {
			return Accounting{}, fmt.Errorf("chunk %s: span %d-%d outside the file's %d characters", c.ID, c.Start, c.End, len(runes))
		}
		if !c.Navigation {
			for i := c.Start; i < c.End; i++ {
				mark[i] = kept
			}
			prevNav = ""
			continue
		}
		// A long list is cut into several chunks: they are one part,
		// named by the first.
		part := prevNav
		if part == "" {
			part = "contents list"
			if label := navLabel(c); label != "" {
				part = fmt.Sprintf("contents list (%s)", label)
			}
		}
		prevNav = part
		k := -1
		for j := range asides {
			if asides[j].Part == part {
				k = j
			}
		}
		if k < 0 {
			asides = append(asides, convert.Aside{Part: part, Why: "it only helps a reader move around the book and answers no question"})
			k = len(asides) - 1
		}
		for i := c.Start; i < c.End; i++ {
			if mark[i] == none {
				mark[i] = nav
				asideOf[i] = k + 1
			}
		}
	}
	var a Accounting
	heading := ""      // the heading path above the current line, as text
	var stack []string // open headings
	var lost *LostPart // the lost span being read
	text := make([]bool, bodyOff, len(runes))
	text = append(text, convert.TextMask(runes[bodyOff:])...)
	for i := bodyOff; i < len(runes); {
		j := i
		for j < len(runes) && runes[j] != '\n' {
			j++
		}
		line := string(runes[i:j])
		level, title, isHeading := headingLine(line)
		for k := i; k < j; k++ {
			r := runes[k]
			if !text[k] {
				continue
			}
			a.Converted++
			switch mark[k] {
			case kept:
				a.Chunked++
				lost = nil
			case nav:
				asides[asideOf[k]-1].Chars++
				lost = nil
			default:
				if isHeading {
					a.InHeadings++
					continue
				}
				a.Lost++
				if lost == nil && len(a.LostParts) < maxLostParts {
					where := heading
					if where == "" {
						where = "the start"
					}
					a.LostParts = append(a.LostParts, LostPart{Where: where})
					lost = &a.LostParts[len(a.LostParts)-1]
				}
				if lost != nil {
					lost.Chars++
					if len([]rune(lost.Sample)) < 40 {
						lost.Sample += string(r)
					}
				}
			}
		}
		if isHeading {
			for len(stack) >= level {
				stack = stack[:len(stack)-1]
			}
			for len(stack) < level-1 {
				stack = append(stack, "")
			}
			stack = append(stack, title)
			heading = strings.Join(nonEmpty(stack), " > ")
		}
		i = j + 1
	}
	for _, x := range asides {
		if x.Chars > 0 {
			a.Aside = append(a.Aside, x)
		}
	}
	return a, nil
}

// navLabel names a navigation chunk by its heading or its first line.
func navLabel(c Chunk) string {
	if n := len(c.HeadingPath); n > 0 && isTOCHeading(c.HeadingPath[n-1]) {
		return c.HeadingPath[n-1]
	}
	first, _, _ := strings.Cut(c.Text, "\n")
	first = strings.TrimSpace(strings.TrimLeft(first, "#"))
	first = strings.TrimRight(first, ":：")
	if r := []rune(first); len(r) > 30 {
		first = string(r[:30]) + "…"
	}
	return first
}

// headingLine parses an ATX heading line (up to three spaces of indent).
func headingLine(line string) (int, string, bool) {
	t := strings.TrimLeft(line, " ")
	if len(line)-len(t) > 3 {
		return 0, "", false
	}
	return heading(t)
}

func nonEmpty(xs []string) []string {
	var out []string
	for _, x := range xs {
		if x != "" {
			out = append(out, x)
		}
	}
	return out
}
