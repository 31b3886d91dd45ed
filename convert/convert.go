package convert

import "time"

// Options control conversion. The zero value is usable: [Options.withDefaults]
// fills what is unset.
type Options struct {
	// MaxFileBytes refuses inputs larger than this (default 512 MiB).
	MaxFileBytes int64
	// MaxUnpackedBytes bounds what a zip container (EPUB, DOCX) may inflate
	// to, against zip bombs (default 1 GiB).
	MaxUnpackedBytes int64
	// PDFEngine is "auto" (default), "pdfium" or "ledongthuc".
	PDFEngine string
	// PDFium is the engine PDFs are converted on (see [NewPDFium]); the
	// caller closes it. When nil, each PDF starts an engine of its own and
	// pays its start-up; [ConvertTheme] and [ConvertFiles] create one for
	// the run.
	PDFium *PDFium
	// PDFPageInstances is how many pdfium instances the pages of one PDF
	// may be read on at once (default [DefaultPDFPageInstances], 1: in
	// order on one instance); config convert.pdf_page_instances. Only
	// instances of [Options.PDFium] idle at the time are used, never
	// waited for, and only while 8 or more pages are left; each extra
	// instance parses the document again, in memory of its own. The text
	// is the same either way.
	PDFPageInstances int
	// Timeout bounds the conversion of one file (default [DefaultTimeout]);
	// config convert.timeout.
	Timeout time.Duration
	// MaxMemoryBytes bounds how much one conversion may grow the heap
	// (default [DefaultMaxMemoryBytes]); config convert.max_memory_bytes.
	MaxMemoryBytes int64
	// SourceName is the path recorded as Document.Source.
	SourceName string
}

// DefaultPDFPageInstances is the default of [Options.PDFPageInstances]: one
// instance per PDF. A second one cost 7-10% more CPU and 5-14 MiB more
// memory and was slower on 2 busy cores (docs/convert-measurements.md).
const DefaultPDFPageInstances = 1

func (o Options) withDefaults() Options {
	if o.MaxFileBytes <= 0 {
		o.MaxFileBytes = 512 << 20
	}
	if o.MaxUnpackedBytes <= 0 {
		o.MaxUnpackedBytes = 1 << 30
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.MaxMemoryBytes <= 0 {
		o.MaxMemoryBytes = DefaultMaxMemoryBytes
	}
	if o.PDFEngine == "" {
		o.PDFEngine = "auto"
	}
	if o.PDFPageInstances <= 0 {
		o.PDFPageInstances = DefaultPDFPageInstances
	}
	return o
}
