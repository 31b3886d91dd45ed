package chunk

import "strings"

// Version identifies how files are cut into chunks; ingest mixes it into a
// document's content hash so a change re-indexes every store (version 2: a
// table of contents ends with its list and is marked Navigation; 3: also
// the list under a "目录：" line that is not a heading; 4: also the labels
// convert.IsContentsLabel knows: a title before 目录 / 目録, a category
// after it, "Contents." with a full stop).
const Version = 4

// Chunk is a span of a converted document, the unit of retrieval and citation.
type Chunk struct {
	// ID is derived from the document, the chunk's position and its content;
	// the same input always yields the same id.
	ID string `json:"id" yaml:"id"`
	// Doc is the converted file, relative to the workspace with forward
	// slashes (knowledge/<theme>/converted/<name>.md).
	Doc string `json:"doc" yaml:"doc"`
	// Source is the original the converted file came from, relative to the
	// workspace (knowledge/<theme>/source/<name>.<ext>).
	Source string `json:"source" yaml:"source"`
	// Title is the document title.
	Title string `json:"title,omitempty" yaml:"title,omitempty"`
	// HeadingPath lists the headings above the chunk, outermost first.
	HeadingPath []string `json:"heading_path" yaml:"heading_path"`
	// Start and End are character (Unicode code point) offsets into the whole
	// converted file, front matter included: []rune(file)[Start:End] == Text.
	Start int `json:"start" yaml:"start"`
	End   int `json:"end" yaml:"end"`
	// Ordinal is the chunk's position in its document, from 0.
	Ordinal int `json:"ordinal" yaml:"ordinal"`
	// Text is the chunk's content.
	Text string `json:"text" yaml:"text"`
	// Tokens is the token count of Text in the configured encoding.
	Tokens int `json:"tokens" yaml:"tokens"`
	// Navigation marks a chunk that only helps a reader move around the
	// book (a table of contents under 目录 / Contents): it answers no
	// question, so the knowledge index leaves it out of search.
	Navigation bool `json:"navigation,omitempty" yaml:"navigation,omitempty"`
}

// Citation is the chunk's place in its document as a reader cites it: the
// document title and the heading path, joined by " > " ("子平真诠 > 八、论用神").
// Either part may be missing.
func (c Chunk) Citation() string {
	parts := make([]string, 0, len(c.HeadingPath)+1)
	if c.Title != "" {
		parts = append(parts, c.Title)
	}
	parts = append(parts, c.HeadingPath...)
	return strings.Join(parts, " > ")
}

// EmbedText is what an embedder is given for the chunk: its [Chunk.Citation]
// on a line of its own, then its text. A passage deep in a section does not
// repeat the section's title, which is often what a question names.
func (c Chunk) EmbedText() string { return c.EmbedTextWith("") }

// EmbedTextWith is [Chunk.EmbedText] with the chunk's subject (see
// [Subjects]) on a line of its own after the citation, when it has one.
func (c Chunk) EmbedTextWith(subject string) string {
	head := c.Citation()
	if subject != "" {
		if head != "" {
			head += "\n"
		}
		head += subject
	}
	if head != "" {
		return head + "\n\n" + c.Text
	}
	return c.Text
}

// MaxSubjectRunes bounds a document's subject (see [Subjects]): a lead
// "sentence" that runs on (a text without sentence ends) is cut there.
const MaxSubjectRunes = 128

// Subjects returns the subject indexed with each of chunks, the chunks of
// one document in order: what the document is about, for the chunks that
// do not say it. A document cut under headings names its subject in the
// heading paths, which are indexed with every chunk; so does a title that
// names it. A document without headings (a reference article, a
// reading-comprehension context, a page of notes) names its subject in
// its lead sentence ("钝头鹦嘴鱼（学名：……）为……") and its later chunks refer
// to it as 本鱼, "it", "the bus route"; a question names the subject, so a
// later chunk holding the answer missed it. The lead sentence of the
// first chunk is the subject of every later chunk (the first holds it in
// its text); when any chunk has a heading path every subject is "" and the
// document is indexed as before. The subject is indexed (lexically and by
// the embedder, see [Chunk.EmbedTextWith]) but is not the chunk's text and
// is never shown as it.
func Subjects(chunks []Chunk) []string {
	out := make([]string, len(chunks))
	if len(chunks) < 2 {
		return out
	}
	for _, c := range chunks {
		if len(c.HeadingPath) > 0 {
			return out
		}
	}
	lead := leadSentence(chunks[0].Text)
	if lead == "" || lead == strings.TrimSpace(chunks[0].Title) {
		return out
	}
	for i := 1; i < len(chunks); i++ {
		out[i] = lead
	}
	return out
}

// leadSentence is the first sentence of text (a heading line's marks taken
// off), at most MaxSubjectRunes runes.
func leadSentence(text string) string {
	runes := []rune(text)
	sp := sentences(runes, 0, len(runes))
	if len(sp) == 0 {
		return ""
	}
	s := runes[sp[0][0]:sp[0][1]]
	if len(s) > MaxSubjectRunes {
		s = s[:MaxSubjectRunes]
	}
	t := strings.TrimSpace(string(s))
	if _, title, ok := heading(t); ok {
		t = title
	}
	return t
}
