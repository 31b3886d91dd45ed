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
func (c Chunk) EmbedText() string {
	if cit := c.Citation(); cit != "" {
		return cit + "\n\n" + c.Text
	}
	return c.Text
}
