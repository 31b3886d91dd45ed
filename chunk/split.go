package chunk

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/vibelife/vibe/convert"
)

// ErrUnknownEncoding is returned by [New] for an encoding other than
// cl100k_base or o200k_base.
var ErrUnknownEncoding = errors.New("chunk: unknown token encoding")

// Options configure a [Splitter].
type Options struct {
	// MaxTokens is the token budget of one chunk (default 512).
	MaxTokens int
	// Overlap is the budget of whole trailing sentences of the previous chunk
	// repeated at the start of the next one when a section is split
	// (default 0; must be less than MaxTokens).
	Overlap int
	// Encoding is "cl100k_base" (default) or "o200k_base".
	Encoding string
	// Root, when set, is the workspace root: [Splitter.Split] records Doc
	// relative to it.
	Root string
}

func (o *Options) applyDefaults() {
	if o.MaxTokens <= 0 {
		o.MaxTokens = 512
	}
	if o.Overlap < 0 {
		o.Overlap = 0
	}
	if o.Overlap >= o.MaxTokens {
		o.Overlap = o.MaxTokens / 4
	}
	if o.Encoding == "" {
		o.Encoding = EncodingCL100K
	}
}

// Splitter splits converted documents into chunks. Build one with [New] and
// reuse it: loading the encoding is expensive. A Splitter is safe for
// concurrent use.
type Splitter struct {
	opts Options
	enc  *counter
}

// New loads the token encoding from the embedded BPE files (no network).
func New(opts Options) (*Splitter, error) {
	opts.applyDefaults()
	ranks, _, err := loadRanks(opts.Encoding)
	if err != nil {
		return nil, err
	}
	return &Splitter{opts: opts, enc: newCounter(ranks, opts.Encoding == EncodingO200K)}, nil
}

// Count returns the number of tokens of s in the splitter's encoding, the
// count tiktoken's encoder gives (see counter).
func (s *Splitter) Count(text string) int {
	return s.enc.Count(text)
}

// Split reads the converted file at path and splits it. See [Splitter.SplitFile].
func (s *Splitter) Split(ctx context.Context, path string) ([]Chunk, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("chunk %s: %w", path, err)
	}
	rel := path
	if s.opts.Root != "" {
		if r, err := filepath.Rel(s.opts.Root, path); err == nil && !strings.HasPrefix(r, "..") {
			rel = r
		}
	}
	return s.SplitFile(ctx, filepath.ToSlash(rel), data)
}

// SplitFile splits the converted file content data, recorded as document
// relPath, into chunks.
//
// How it splits:
//   - The body is cut into sections at ATX headings (# to ######, outside
//     fenced code). Each section's HeadingPath is the chain of headings above
//     it, outermost first, leaving out the document's first heading when it
//     repeats the title (the title is cited with the path, see
//     [Chunk.Citation]). A section that fits the budget becomes one chunk,
//     heading line included; sections are never merged, so a chunk never
//     crosses a heading and its heading path is always exact. A section that
//     is only a heading line yields no chunk.
//   - A section over the budget is cut into sentences (after 。！？； and after
//     . ! ? followed by white space, and at line ends) packed greedily up to
//     MaxTokens. The next chunk starts with the whole trailing sentences of
//     the previous one that fit in Overlap. A sentence is cut only when it
//     alone exceeds the budget, then at the longest rune prefix that fits
//     (never inside a rune).
//   - Start and End are rune offsets into the whole file (front matter
//     included) and Text is exactly those runes, trimmed of white space.
//   - ID is "c_" + the first 16 hex digits of sha256(Doc NUL heading path
//     joined by U+001F NUL Text NUL n), n counting earlier chunks of the same
//     document with the same heading path and text. It depends on content
//     and position only, so it is stable across runs and machines.
//
// An empty body yields no chunks and no error. A file without vibe's front
// matter is returned as an error wrapping [convert.ErrNoFrontMatter].
// SplitFile stops with ctx.Err() when ctx is cancelled.
func (s *Splitter) SplitFile(ctx context.Context, relPath string, data []byte) ([]Chunk, error) {
	doc, bodyOff, err := convert.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("chunk %s: %w", relPath, err)
	}
	runes := []rune(string(data))
	var out []Chunk
	seen := map[string]int{}
	// emit records runes[start:end]; tokens is its count when known, or -1.
	emit := func(path []string, nav bool, start, end, tokens int) {
		if a, b := trim(runes, start, end); a != start || b != end {
			start, end, tokens = a, b, -1
		}
		if start >= end {
			return
		}
		text := string(runes[start:end])
		if tokens < 0 {
			tokens = s.Count(text)
		}
		key := strings.Join(path, "\x1f") + "\x00" + text
		n := seen[key]
		seen[key] = n + 1
		h := sha256.Sum256([]byte(relPath + "\x00" + key + "\x00" + strconv.Itoa(n)))
		out = append(out, Chunk{
			ID:          "c_" + hex.EncodeToString(h[:8]),
			Doc:         relPath,
			Source:      doc.Source,
			Title:       doc.Title,
			HeadingPath: append([]string{}, path...),
			Start:       start,
			End:         end,
			Ordinal:     len(out),
			Text:        text,
			Tokens:      tokens,
			Navigation:  nav,
		})
	}
	for _, sec := range sections(runes, bodyOff, doc.Title) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if sec.bodyStart >= sec.end || isSpace(runes[sec.bodyStart:sec.end]) {
			continue
		}
		a, b := trim(runes, sec.start, sec.end)
		if b-a <= 0 {
			continue
		}
		if n, ok := s.fits(runes, a, b); ok {
			emit(sec.path, sec.nav, a, b, n)
			continue
		}
		for _, sp := range s.pack(runes, a, b) {
			emit(sec.path, sec.nav, sp[0], sp[1], sp[2])
		}
	}
	return out, nil
}

type section struct {
	path      []string
	start     int // rune offset of the heading line (or body start)
	bodyStart int // rune offset after the heading line
	end       int
	nav       bool // a table of contents (see isTOCHeading)
	label     bool // nav opened by a "目录：" line, not a heading
}

// sections cuts runes[from:] at ATX headings outside fenced code. When the
// document's first heading repeats its title (the front matter title was
// taken from that H1), the heading stays out of the paths: a citation reads
// "Title > Chapter 1", not "Title > Title > Chapter 1".
func sections(runes []rune, from int, title string) []section {
	var out []section
	type open struct {
		level int
		title string
		hide  bool
	}
	var stack []open
	first := true
	cur := section{start: from, bodyStart: from}
	inFence := false
	var fence string
	tocEntries := 0 // entries seen under an open table-of-contents heading
	pathOf := func() []string {
		path := make([]string, 0, len(stack))
		for _, h := range stack {
			if !h.hide {
				path = append(path, h.title)
			}
		}
		return path
	}
	for i := from; i < len(runes); {
		j := i
		for j < len(runes) && runes[j] != '\n' {
			j++
		}
		line := string(runes[i:j])
		trimmed := strings.TrimLeft(line, " ")
		next := j
		if next < len(runes) {
			next++
		}
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			f := trimmed[:3]
			if !inFence {
				inFence, fence = true, f
			} else if f == fence {
				inFence = false
			}
		} else if !inFence && len(line)-len(trimmed) <= 3 {
			if level, htitle, ok := heading(trimmed); ok {
				cur.end = i
				out = append(out, cur)
				for len(stack) > 0 && stack[len(stack)-1].level >= level {
					stack = stack[:len(stack)-1]
				}
				stack = append(stack, open{level, htitle, first && sameTitle(htitle, title)})
				first = false
				cur = section{path: pathOf(), start: i, bodyStart: next, nav: isTOCHeading(htitle)}
				tocEntries = 0
			} else if cur.nav && strings.TrimSpace(line) != "" {
				// A table of contents ends where its list does: the text
				// after it belongs to the heading above 目录, not to 目录.
				if isTOCEntry(trimmed) {
					tocEntries++
				} else {
					// Text before any entry: the heading names no list
					// (or one run into a paragraph), and the text after
					// it is not a table of contents that never ends.
					cur.end = i
					out = append(out, cur)
					if !cur.label {
						stack = stack[:len(stack)-1]
					}
					cur = section{path: pathOf(), start: i, bodyStart: i}
				}
			} else if isTOCLabel(trimmed) {
				// "目录：" as a line of text, not a heading: the list under
				// it is a table of contents all the same, filed under the
				// heading it is in.
				cur.end = i
				out = append(out, cur)
				cur = section{path: pathOf(), start: i, bodyStart: next, nav: true, label: true}
				tocEntries = 0
			}
		}
		i = next
	}
	cur.end = len(runes)
	out = append(out, cur)
	return out
}

// isTOCHeading reports whether a heading names a table of contents.
func isTOCHeading(h string) bool {
	switch strings.ToLower(strings.Join(strings.Fields(h), " ")) {
	case "目录", "目錄", "目 录", "目 錄", "总目", "總目", "contents", "table of contents":
		return true
	}
	return convert.IsContentsLabel(h)
}

// isTOCLabel reports whether a line of text (not a heading) announces a
// table of contents: 目录 or Contents alone, with or without a colon.
func isTOCLabel(line string) bool {
	t := strings.TrimRight(strings.TrimSpace(line), ":：")
	t = strings.Trim(t, "*_ ")
	return t != "" && (isTOCHeading(t) || convert.IsContentsLabel(t))
}

// isTOCEntry reports whether a line reads as an entry of a table of
// contents: a list item or link, or a short title without sentence
// punctuation (卷一 论十干, 第三章 论用神 …… 12).
func isTOCEntry(line string) bool {
	t := strings.TrimSpace(line)
	if strings.HasPrefix(t, "- ") || strings.HasPrefix(t, "* ") || strings.HasPrefix(t, "+ ") || strings.HasPrefix(t, "[") {
		return true
	}
	if n := strings.IndexAny(t, ".)、"); n > 0 && n <= 4 && strings.Trim(t[:n], "0123456789") == "" {
		return true
	}
	return utf8.RuneCountInString(t) <= 40 && !strings.ContainsAny(t, "。，；！？,;!?")
}

// sameTitle compares a heading with the document title, ignoring case and
// runs of white space.
func sameTitle(heading, title string) bool {
	return title != "" && strings.EqualFold(strings.Join(strings.Fields(heading), " "), strings.Join(strings.Fields(title), " "))
}

// heading parses an ATX heading line.
func heading(line string) (int, string, bool) {
	level := 0
	for level < len(line) && line[level] == '#' {
		level++
	}
	if level == 0 || level > 6 {
		return 0, "", false
	}
	rest := line[level:]
	if rest != "" && rest[0] != ' ' && rest[0] != '\t' {
		return 0, "", false
	}
	title := strings.TrimSpace(rest)
	title = strings.TrimSpace(strings.TrimRight(title, "#"))
	if title == "" {
		return 0, "", false
	}
	return level, title, true
}

// pack splits runes[a:b] into spans within the token budget, each with its
// token count.
func (s *Splitter) pack(runes []rune, a, b int) [][3]int {
	type sent struct{ start, end, tokens int }
	var sents []sent
	for _, sp := range sentences(runes, a, b) {
		if n, ok := s.fits(runes, sp[0], sp[1]); ok {
			sents = append(sents, sent{sp[0], sp[1], n})
			continue
		}
		for _, piece := range s.cut(runes, sp[0], sp[1]) {
			sents = append(sents, sent{piece[0], piece[1], piece[2]})
		}
	}
	var out [][3]int
	i := 0
	for i < len(sents) {
		// Overlap: whole trailing sentences of the previous chunk.
		first := i
		if len(out) > 0 && s.opts.Overlap > 0 {
			budget := 0
			for k := i - 1; k >= 0 && sents[k].start >= out[len(out)-1][0]; k-- {
				if budget+sents[k].tokens > s.opts.Overlap || budget+sents[k].tokens+sents[i].tokens > s.opts.MaxTokens {
					break
				}
				budget += sents[k].tokens
				first = k
			}
		}
		j, sum := first, 0
		for j < len(sents) && (j < i+1 || sum+sents[j].tokens <= s.opts.MaxTokens) {
			sum += sents[j].tokens
			j++
		}
		// The sum of sentence counts can differ from the joint count at
		// sentence seams; back off until the real count fits.
		count := func() int { return s.Count(string(runes[sents[first].start:sents[j-1].end])) }
		n := count()
		for j > i+1 && n > s.opts.MaxTokens {
			j--
			n = count()
		}
		for first < i && n > s.opts.MaxTokens {
			first++
			n = count()
		}
		out = append(out, [3]int{sents[first].start, sents[j-1].end, n})
		i = j
	}
	return out
}

// maxRunesPerToken bounds how many runes one token may cover on average in
// a span that fits the budget. Spans longer than MaxTokens*maxRunesPerToken
// runes are treated as over budget without encoding them: byte-pair merging
// is quadratic in the length of a pre-token, and a gigantic line without
// spaces or punctuation is one pre-token.
const maxRunesPerToken = 6

// fits reports whether runes[a:b] is within the token budget, and its
// token count when it is.
func (s *Splitter) fits(runes []rune, a, b int) (int, bool) {
	if b-a > s.opts.MaxTokens*maxRunesPerToken {
		return 0, false
	}
	n := s.Count(string(runes[a:b]))
	return n, n <= s.opts.MaxTokens
}

// cutWindow is the number of runes counted at a time when cutting an
// over-long sentence.
const cutWindow = 32

// cut splits one over-long sentence into pieces within the budget, at rune
// boundaries. It estimates with the token counts of cutWindow-rune windows
// (merges cannot cross a window, so the estimate rarely undercounts), then
// verifies each piece with its exact count, which it returns, and shrinks
// it when needed.
func (s *Splitter) cut(runes []rune, a, b int) [][3]int {
	var out [][3]int
	max := s.opts.MaxTokens
	for a < b {
		end, sum := a, 0
		for end < b {
			w := end + cutWindow
			if w > b {
				w = b
			}
			n := s.Count(string(runes[end:w]))
			if sum+n > max {
				// Take part of the window, rune by rune.
				for end < w {
					n := s.Count(string(runes[end : end+1]))
					if sum+n > max {
						break
					}
					sum += n
					end++
				}
				break
			}
			sum += n
			end = w
		}
		if end == a {
			end = a + 1 // a single rune always goes, whatever its count
		}
		n := s.Count(string(runes[a:end]))
		for end > a+1 && n > max {
			end--
			n = s.Count(string(runes[a:end]))
		}
		out = append(out, [3]int{a, end, n})
		a = end
	}
	return out
}

// sentences returns the sentence spans of runes[a:b]. A sentence ends after
// 。！？； (and any closing quotes or brackets), after . ! ? followed by white
// space, or at a line end.
func sentences(runes []rune, a, b int) [][2]int {
	var out [][2]int
	start := a
	for i := a; i < b; i++ {
		r := runes[i]
		end := -1
		switch r {
		case '。', '！', '？', '；', '\n':
			end = i + 1
			for end < b && isCloser(runes[end]) {
				end++
			}
		case '.', '!', '?':
			if i+1 < b && unicode.IsSpace(runes[i+1]) {
				end = i + 1
			}
		}
		if end < 0 {
			continue
		}
		for end < b && unicode.IsSpace(runes[end]) {
			end++
		}
		if !isSpace(runes[start:end]) {
			out = append(out, [2]int{start, end})
		} else if len(out) > 0 {
			out[len(out)-1][1] = end
		}
		start = end
		i = end - 1
	}
	if start < b && !isSpace(runes[start:b]) {
		out = append(out, [2]int{start, b})
	}
	return out
}

func isCloser(r rune) bool {
	switch r {
	case '”', '’', '」', '』', '）', '》', '"', '\'', ')':
		return true
	}
	return false
}

func isSpace(rs []rune) bool {
	for _, r := range rs {
		if !unicode.IsSpace(r) {
			return false
		}
	}
	return true
}

func trim(runes []rune, a, b int) (int, int) {
	for a < b && unicode.IsSpace(runes[a]) {
		a++
	}
	for b > a && unicode.IsSpace(runes[b-1]) {
		b--
	}
	return a, b
}
