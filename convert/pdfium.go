package convert

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"unicode"

	"github.com/klippa-app/go-pdfium"
	pdfiumerrors "github.com/klippa-app/go-pdfium/errors"
	"github.com/klippa-app/go-pdfium/references"
	"github.com/klippa-app/go-pdfium/requests"
	"github.com/klippa-app/go-pdfium/webassembly"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"

	"github.com/vibelife/vibe/internal/textmetric"
)

// PDFium is the pdfium WebAssembly engine PDF conversions run on: a bounded
// pool of pdfium instances sharing one compiled module. Nothing happens until
// the first PDF asks for an instance, so a run without PDFs pays nothing; the
// first one compiles the module embedded in go-pdfium (no download), which
// takes seconds, or loads wazero's compilation of it from the cache
// directory. Every later conversion borrows an instance instead of starting
// a runtime per file or page.
//
// Create it with [NewPDFium], pass it in [Options.PDFium] to every
// conversion, and Close it when they are done. It is safe for concurrent
// use: at most Instances conversions run on pdfium at once, the others wait
// for a free instance (or their context).
type PDFium struct {
	instances   int
	cacheDir    string
	memoryPages uint32
	release     func()
	// slots holds one token per instance a conversion has borrowed: with
	// it a PDF can ask for a second instance only when one is idle
	// ([PDFium.tryInstance]), never waiting for it.
	slots chan struct{}

	// instantiated counts the pdfium instances created (one linear memory
	// each): an engine that serves many PDFs creates at most Instances
	// unless one was discarded.
	instantiated atomic.Int64
	// linearBytes is the linear memory of the instances outside the Go
	// heap (see wasmMemoryAllocator).
	linearBytes atomic.Int64

	mu     sync.Mutex
	pool   pdfium.Pool
	cache  wazero.CompilationCache
	err    error // the start-up error, returned to every later caller
	closed bool
}

// PDFiumOptions configure [NewPDFium]. The zero value is usable.
type PDFiumOptions struct {
	// Instances bounds how many PDFs are converted with pdfium at once
	// (default: the number of CPUs).
	Instances int
	// CacheDir keeps wazero's native compilation of the pdfium module
	// between processes, so only the first process on a machine pays for
	// compiling it (default: <user cache directory>/vibe/pdfium-wasm; "-"
	// compiles in memory every time).
	CacheDir string
	// MaxMemoryBytes bounds the memory of each pdfium instance (default
	// [DefaultMaxMemoryBytes], at most 4 GiB, WebAssembly's limit); a PDF
	// that needs more fails as damaged instead of taking the machine's.
	MaxMemoryBytes int64
	// ReleaseMemory, when set, is called just before the engine compiles or
	// loads its module and again once it has started (not when starting
	// failed): where the process's own start-up ends and where pdfium's
	// does. It runs with the engine locked and must not use it. vibe
	// releases the executable's pages start-up touched there
	// (internal/procmem).
	ReleaseMemory func()
}

// NewPDFium returns an engine that starts on its first use.
func NewPDFium(opts PDFiumOptions) *PDFium {
	if opts.Instances <= 0 {
		opts.Instances = max(1, runtime.NumCPU())
	}
	if opts.CacheDir == "" {
		if dir, err := os.UserCacheDir(); err == nil {
			opts.CacheDir = filepath.Join(dir, "vibe", "pdfium-wasm")
		}
	}
	if opts.MaxMemoryBytes <= 0 {
		opts.MaxMemoryBytes = DefaultMaxMemoryBytes
	}
	pages := min(opts.MaxMemoryBytes/wasmPageBytes, 65536)
	return &PDFium{instances: opts.Instances, cacheDir: opts.CacheDir, memoryPages: uint32(max(pages, 1)), release: opts.ReleaseMemory,
		slots: make(chan struct{}, opts.Instances)}
}

// offHeapBytes is the memory pdfium's instances hold outside the Go heap.
func (p *PDFium) offHeapBytes() int64 {
	if p == nil {
		return 0
	}
	return p.linearBytes.Load()
}

// wasmPageBytes is the size of a WebAssembly memory page.
const wasmPageBytes = 64 << 10

// errPDFiumClosed is returned for conversions after [PDFium.Close].
var errPDFiumClosed = errors.New("the pdfium engine is closed")

// instance borrows a pdfium instance, starting the engine on first use; the
// caller closes it (Kill when it may be broken). It waits for a free
// instance until ctx is done.
func (p *PDFium) instance(ctx context.Context) (pdfium.Pdfium, error) {
	pool, err := p.started()
	if err != nil {
		return nil, err
	}
	select {
	case p.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return p.borrow(ctx, pool)
}

// tryInstance borrows an idle instance of a started engine, or returns
// false at once when all are in use.
func (p *PDFium) tryInstance(ctx context.Context) (pdfium.Pdfium, bool) {
	pool, err := p.started()
	if err != nil {
		return nil, false
	}
	select {
	case p.slots <- struct{}{}:
	default:
		return nil, false
	}
	inst, err := p.borrow(ctx, pool)
	return inst, err == nil
}

// started returns the pool, starting the engine if it has not started.
func (p *PDFium) started() (pdfium.Pool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, errPDFiumClosed
	}
	if p.pool == nil && p.err == nil {
		p.start()
	}
	if p.err != nil {
		return nil, fmt.Errorf("start pdfium: %w", p.err)
	}
	return p.pool, nil
}

// borrow takes an instance from the pool for a slot the caller holds; the
// slot is given back when the instance is closed or killed. The pool has
// as many instances as there are slots, so this does not wait.
func (p *PDFium) borrow(ctx context.Context, pool pdfium.Pool) (pdfium.Pdfium, error) {
	inst, err := pool.GetInstanceWithContext(ctx)
	if err != nil {
		<-p.slots
		return nil, err
	}
	return &slotInstance{Pdfium: inst, slots: p.slots}, nil
}

// slotInstance is a borrowed instance that gives its slot back when it is
// closed or killed.
type slotInstance struct {
	pdfium.Pdfium
	slots chan struct{}
	once  sync.Once
}

// Close returns the instance to the pool.
func (s *slotInstance) Close() error {
	err := s.Pdfium.Close()
	s.once.Do(func() { <-s.slots })
	return err
}

// Kill discards the instance.
func (s *slotInstance) Kill() error {
	err := s.Pdfium.Kill()
	s.once.Do(func() { <-s.slots })
	return err
}

// Start compiles (or loads from the cache directory) the pdfium module and
// creates the instance pool, if that has not happened yet, and returns the
// start-up error. Conversions start the engine on first use anyway;
// [ConvertBytes] calls Start before a PDF's time and memory bounds begin, so
// the one-off compilation (tens of seconds on a fresh machine, more under
// the race detector) is never charged to the first PDF as a hang.
func (p *PDFium) Start() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return errPDFiumClosed
	}
	if p.pool == nil && p.err == nil {
		p.start()
	}
	if p.err != nil {
		return fmt.Errorf("start pdfium: %w", p.err)
	}
	return nil
}

// start compiles (or loads) the module and creates the pool; p.mu is held.
func (p *PDFium) start() {
	if p.release != nil {
		p.release()
	}
	rc := wazero.NewRuntimeConfig().WithCoreFeatures(api.CoreFeaturesV2 | experimental.CoreFeaturesExceptionHandling).
		WithMemoryLimitPages(p.memoryPages)
	if p.cacheDir != "" && p.cacheDir != "-" {
		// Without a usable cache directory the module is compiled in
		// memory: slower, not wrong.
		if cache, err := wazero.NewCompilationCacheWithDir(p.cacheDir); err == nil {
			p.cache = cache
			rc = rc.WithCompilationCache(cache)
		}
	}
	// The context the instances are created with carries the allocator of
	// their linear memory.
	alloc := wasmMemoryAllocator(&p.linearBytes)
	ctx := experimental.WithMemoryAllocator(context.Background(), experimental.MemoryAllocatorFunc(
		func(capacity, max uint64) experimental.LinearMemory {
			p.instantiated.Add(1)
			return alloc.Allocate(capacity, max)
		}))
	p.pool, p.err = webassembly.Init(webassembly.Config{
		Context: ctx, MinIdle: 0, MaxIdle: p.instances, MaxTotal: p.instances,
		RuntimeConfig: rc,
		// The document is passed as bytes: pdfium sees no file system and
		// its diagnostics are not printed.
		FSConfig: wazero.NewFSConfig(),
		Stdout:   io.Discard,
		Stderr:   io.Discard,
		// An instance serves one PDF after another: instantiating the
		// module and initialising pdfium again for every file would cost
		// more than converting a small PDF.
		ReuseWorkers: true,
	})
	if p.err == nil && p.release != nil {
		p.release()
	}
}

// Close stops the engine and frees its instances. It must not be called
// while conversions using it are running; later conversions fail. Closing
// twice, or an engine that never started, is fine.
func (p *PDFium) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil
	}
	p.closed = true
	var err error
	if p.pool != nil {
		err = p.pool.Close()
	}
	if p.cache != nil {
		if cerr := p.cache.Close(context.Background()); err == nil {
			err = cerr
		}
	}
	return err
}

// errPDFEncrypted is the error for a password-protected PDF.
var errPDFEncrypted = fmt.Errorf("%w: supply a decrypted copy (e.g. qpdf --decrypt --password=... in.pdf out.pdf)", ErrEncrypted)

// convertPDFium extracts the text of every page with pdfium (WebAssembly,
// pure Go), then structures it like convertPDF: running headers, footers and
// page numbers removed, paragraphs joined, headings from the outline when the
// PDF has one and from numbering otherwise. A panic or trap inside pdfium is
// returned as ErrDamaged (or the page as failed) and the instance is
// discarded; otherwise it serves the next PDF.
func convertPDFium(ctx context.Context, data []byte, opts Options) (doc Document, err error) {
	doc.Format = "pdf"
	engine := opts.PDFium
	if engine == nil {
		// No engine given: one for this PDF alone.
		engine = NewPDFium(PDFiumOptions{Instances: 1})
		defer engine.Close()
	}
	inst, err := engine.instance(ctx)
	if err != nil {
		return doc, err
	}
	// The instance goes back to the pool when the conversion ends, ready for
	// the next PDF, unless pdfium panicked or trapped: then it is discarded.
	// A done ctx is honoured between pages and between calls, not inside
	// one: interrupting a running call (wazero's WithCloseOnContextDone)
	// costs a goroutine and a channel on every call into pdfium. A page
	// that keeps pdfium busy does not hold the caller: [bounded] returns at
	// the time bound and leaves this goroutine to finish the page.
	broken := false
	trapped := false // a call into pdfium trapped: its state is suspect
	defer func() {
		if r := recover(); r != nil {
			broken = true
			err = fmt.Errorf("%w: pdfium failed (%v); the file is probably damaged", ErrDamaged, r)
		}
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		if broken || trapped {
			inst.Kill()
		} else {
			inst.Close()
		}
	}()
	opened, err := inst.OpenDocument(&requests.OpenDocument{File: &data})
	if err != nil {
		trapped = pdfiumTrapped(err)
		if errors.Is(err, pdfiumerrors.ErrPassword) || strings.Contains(strings.ToLower(err.Error()), "password") {
			return doc, errPDFEncrypted
		}
		return doc, fmt.Errorf("%w: %v", ErrDamaged, err)
	}
	ref := opened.Document
	defer inst.FPDF_CloseDocument(&requests.FPDF_CloseDocument{Document: ref})

	count, err := inst.FPDF_GetPageCount(&requests.FPDF_GetPageCount{Document: ref})
	if err != nil {
		return doc, fmt.Errorf("%w: page count: %v", ErrDamaged, err)
	}
	n := count.PageCount
	doc.Quality.Pages = n
	if meta, err := inst.FPDF_GetMetaText(&requests.FPDF_GetMetaText{Document: ref, Tag: "Title"}); err == nil {
		doc.Title = strings.TrimSpace(meta.Value)
	}
	outline := map[string]int{}
	pdfiumOutline(ctx, inst, ref, outline)

	pages := make([]string, n)
	pageErrs := make([]error, n)
	var next atomic.Int64 // the next page to read, shared with the helpers
	// helpers read pages on the engine's idle instances alongside this
	// one, at most opts.PDFPageInstances-1 of them, each borrowed only
	// when it is idle and enough pages are left; a helper whose calls
	// trapped discards its own instance.
	var helpers sync.WaitGroup
	nHelpers := 0
	for {
		if err := ctx.Err(); err != nil {
			helpers.Wait()
			return doc, err
		}
		if nHelpers+1 < opts.PDFPageInstances && n-int(next.Load()) >= minPagesPerInstance {
			if h, ok := engine.tryInstance(ctx); ok {
				nHelpers++
				helpers.Add(1)
				go func() {
					defer helpers.Done()
					pdfiumPageHelper(ctx, h, data, &next, pages, pageErrs)
				}()
			}
		}
		i := int(next.Add(1) - 1)
		if i >= n {
			break
		}
		pages[i], pageErrs[i] = pdfiumPageText(inst, ref, i)
		if pageErrs[i] != nil {
			trapped = trapped || pdfiumTrapped(pageErrs[i])
		}
	}
	helpers.Wait()
	if err := ctx.Err(); err != nil {
		return doc, err
	}
	var failed []int
	for i, text := range pages {
		if pageErrs[i] != nil {
			failed = append(failed, i+1)
		}
		if strings.TrimSpace(text) == "" {
			doc.Quality.PagesWithoutText = append(doc.Quality.PagesWithoutText, i+1)
		}
	}
	if err := finishPDF(&doc, pages, failed, "could not be read (damaged page)", outline); err != nil {
		return doc, err
	}
	return doc, nil
}

// pdfiumTrapped says whether err is a trap or panic inside pdfium (go-pdfium
// returns both as errors) rather than pdfium's own refusal: the instance
// that ran it is discarded, not handed to the next PDF.
func pdfiumTrapped(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "wasm error") || strings.Contains(msg, "panic occurred")
}

// minPagesPerInstance is how many pages must be left to read before a PDF
// borrows another instance: opening the document again costs about as much
// as reading a few pages.
const minPagesPerInstance = 8

// pdfiumPageHelper reads pages of the PDF in data on its own instance h
// (which parses the document again) alongside the conversion's instance,
// taking the next page from next until none is left or ctx is done, and
// stores each page's text and error at its index. It closes h, or kills it
// when a call trapped or panicked, and reports whether one did. Text of a
// page does not depend on the instance that reads it.
func pdfiumPageHelper(ctx context.Context, h pdfium.Pdfium, data []byte, next *atomic.Int64, pages []string, errs []error) (trapped bool) {
	cur := -1
	defer func() {
		if r := recover(); r != nil {
			trapped = true
			if cur >= 0 {
				errs[cur] = fmt.Errorf("pdfium failed (%v)", r)
			}
		}
		if trapped {
			h.Kill()
		} else {
			h.Close()
		}
	}()
	opened, err := h.OpenDocument(&requests.OpenDocument{File: &data})
	if err != nil {
		// The conversion's own instance opened it: this one is suspect.
		return true
	}
	defer h.FPDF_CloseDocument(&requests.FPDF_CloseDocument{Document: opened.Document})
	for ctx.Err() == nil {
		cur = int(next.Add(1) - 1)
		if cur >= len(pages) {
			return trapped
		}
		pages[cur], errs[cur] = pdfiumPageText(h, opened.Document, cur)
		if errs[cur] != nil && pdfiumTrapped(errs[cur]) {
			trapped = true
		}
	}
	return trapped
}

// pdfiumPageText returns the normalised text of page i: pdfium's text page
// is loaded once and read whole in one call (FPDFText_GetText), not one call
// per character, and the footnote marks are looked up on the same text page.
func pdfiumPageText(inst pdfium.Pdfium, ref references.FPDF_DOCUMENT, i int) (string, error) {
	page := requests.Page{ByIndex: &requests.PageByIndex{Document: ref, Index: i}}
	tp, err := inst.FPDFText_LoadPage(&requests.FPDFText_LoadPage{Page: page})
	if err != nil {
		return "", err
	}
	defer inst.FPDFText_ClosePage(&requests.FPDFText_ClosePage{TextPage: tp.TextPage})
	count, err := inst.FPDFText_CountChars(&requests.FPDFText_CountChars{TextPage: tp.TextPage})
	if err != nil {
		return "", err
	}
	if count.Count <= 0 {
		return "", nil
	}
	res, err := inst.FPDFText_GetText(&requests.FPDFText_GetText{TextPage: tp.TextPage, Count: count.Count})
	if err != nil {
		return "", err
	}
	return normalizePDFiumText(separateFootnoteMarks(inst, tp.TextPage, res.Text)), nil
}

// separateFootnoteMarks rewrites a footnote number that opens a line glued
// to the footnote's first word ("1Preliminary KNKT…", "12The magnitude…":
// pdfium writes no space between a superscript and the word after it) as
// superscript digits and a space ("¹ Preliminary KNKT…", "¹² The…"), which
// also keeps the footnote from reading as a numbered heading. A candidate,
// one to three digits at a line start followed by a capitalised word, is
// rewritten only when pdfium places the digits above the letter's baseline
// (raised by a fifth of the letter's height or more), so "3Com" set on the
// baseline stays as it is. text is pdfium's text of the page, whose runes
// are the text page's characters.
func separateFootnoteMarks(inst pdfium.Pdfium, textPage references.FPDF_TEXTPAGE, text string) string {
	rs := []rune(text)
	type mark struct{ start, letter int }
	var marks []mark
	for i := 0; i < len(rs); i++ {
		if i > 0 && rs[i-1] != '\n' && rs[i-1] != '\r' {
			continue
		}
		j := i
		for j < len(rs) && j-i < 4 && rs[j] >= '0' && rs[j] <= '9' {
			j++
		}
		if j > i && j-i <= 3 && j+1 < len(rs) && unicode.IsUpper(rs[j]) && unicode.IsLower(rs[j+1]) {
			marks = append(marks, mark{i, j})
		}
	}
	if len(marks) == 0 {
		return text
	}
	char := func(i int) rune {
		u, err := inst.FPDFText_GetUnicode(&requests.FPDFText_GetUnicode{TextPage: textPage, Index: i})
		if err != nil {
			return -1
		}
		return rune(u.Unicode)
	}
	raised := func(j int) bool {
		if char(j) != rs[j] || char(j-1) != rs[j-1] {
			return false // the text does not line up with the characters
		}
		digit, err1 := inst.FPDFText_GetCharOrigin(&requests.FPDFText_GetCharOrigin{TextPage: textPage, Index: j - 1})
		letter, err2 := inst.FPDFText_GetCharOrigin(&requests.FPDFText_GetCharOrigin{TextPage: textPage, Index: j})
		box, err3 := inst.FPDFText_GetCharBox(&requests.FPDFText_GetCharBox{TextPage: textPage, Index: j})
		if err1 != nil || err2 != nil || err3 != nil {
			return false
		}
		return isRaised(digit.Y, letter.Y, box.Top-box.Bottom)
	}
	var sb strings.Builder
	sb.Grow(len(text) + 4*len(marks))
	prev := 0
	for _, m := range marks {
		if raised(m.letter) {
			sb.WriteString(string(rs[prev:m.start]))
			sb.WriteString(superscriptDigits(string(rs[m.start:m.letter])))
			sb.WriteByte(' ')
			prev = m.letter
		}
	}
	sb.WriteString(string(rs[prev:]))
	return sb.String()
}

// isRaised says whether a glyph on baseline y sits above the next one's
// baseline next by at least a fifth of that glyph's height: a superscript.
func isRaised(y, next, height float64) bool {
	return height > 0 && y-next >= height/5
}

// superscriptDigits writes ASCII digits as superscript digits (12 -> ¹²).
func superscriptDigits(s string) string {
	const sup = "⁰¹²³⁴⁵⁶⁷⁸⁹"
	digits := []rune(sup)
	return strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return digits[r-'0']
		}
		return r
	}, s)
}

// normalizePDFiumText turns pdfium's page text into plain lines: CRLF line
// ends, soft hyphens at line ends (U+0002 / U+00AD) rejoined with the next
// line's word, and other soft hyphens dropped.
func normalizePDFiumText(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	s = strings.ReplaceAll(s, "\u0002\n", "")
	s = strings.ReplaceAll(s, "\u00ad\n", "")
	s = strings.ReplaceAll(s, "\ufffe\n", "") // FPDFText_GetText's soft hyphen
	s = strings.ReplaceAll(s, "\ufffe", "")
	return dropSpacesBetweenCJK(s)
}

// dropSpacesBetweenCJK removes the blanks some PDFs put between every pair of
// CJK characters (letter-spaced typesetting), which would otherwise split
// words in the Markdown; spaces next to Latin text are kept.
func dropSpacesBetweenCJK(s string) string {
	rs := []rune(s)
	var sb strings.Builder
	sb.Grow(len(s))
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		if r == ' ' || r == '\u3000' {
			j := i
			for j < len(rs) && (rs[j] == ' ' || rs[j] == '\u3000') {
				j++
			}
			if i > 0 && j < len(rs) && isCJKText(rs[i-1]) && isCJKText(rs[j]) {
				i = j - 1
				continue
			}
		}
		sb.WriteRune(r)
	}
	return sb.String()
}

// isCJKText reports whether r is a CJK character or CJK/full-width punctuation.
func isCJKText(r rune) bool {
	return textmetric.IsCJK(r) || (r >= 0x3000 && r <= 0x303F) || (r >= 0xFF00 && r <= 0xFFEF) || r == '…'
}

// pdfiumOutline records each outline title with its depth (1 = top), as
// pdfOutline does for the other engine. It walks the outline itself, not
// with go-pdfium's GetBookmarks, which follows /Next and /First without
// end when they loop (a 989-byte file held pdfium 2 minutes and 1 GB).
// pdfium hands out a new reference for every visit, so a bookmark is known
// again by its title and destination page: the walk of a sibling chain
// stops at the first bookmark already seen (a loop, or a duplicate whose
// title is recorded already), and it never goes past maxOutlineDepth
// levels or maxOutlineItems bookmarks.
func pdfiumOutline(ctx context.Context, inst pdfium.Pdfium, ref references.FPDF_DOCUMENT, out map[string]int) {
	type seenKey struct {
		title string
		page  int
	}
	seen := map[seenKey]bool{}
	items := 0
	var walk func(parent *references.FPDF_BOOKMARK, depth int)
	walk = func(parent *references.FPDF_BOOKMARK, depth int) {
		if depth > maxOutlineDepth {
			return
		}
		first, err := inst.FPDFBookmark_GetFirstChild(&requests.FPDFBookmark_GetFirstChild{Document: ref, Bookmark: parent})
		if err != nil {
			return
		}
		for bm := first.Bookmark; bm != nil; {
			if ctx.Err() != nil || items >= maxOutlineItems {
				return
			}
			items++
			title := ""
			if t, err := inst.FPDFBookmark_GetTitle(&requests.FPDFBookmark_GetTitle{Bookmark: *bm}); err == nil {
				title = t.Title
			}
			page := -1
			if d, err := inst.FPDFBookmark_GetDest(&requests.FPDFBookmark_GetDest{Document: ref, Bookmark: *bm}); err == nil && d.Dest != nil {
				if pi, err := inst.FPDFDest_GetDestPageIndex(&requests.FPDFDest_GetDestPageIndex{Document: ref, Dest: *d.Dest}); err == nil {
					page = pi.Index
				}
			}
			k := seenKey{title, page}
			if seen[k] {
				return
			}
			seen[k] = true
			if h := normHeading(title); h != "" {
				if _, ok := out[h]; !ok {
					out[h] = depth
				}
			}
			walk(bm, depth+1)
			next, err := inst.FPDFBookmark_GetNextSibling(&requests.FPDFBookmark_GetNextSibling{Document: ref, Bookmark: *bm})
			if err != nil {
				return
			}
			bm = next.Bookmark
		}
	}
	walk(nil, 1)
}
