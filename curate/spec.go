package curate

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/vibelife/vibe/internal/atomicfile"
)

// File is the content of knowledge/<theme>/curate.yaml.
type File struct {
	// Language is the wanted language (zh, en, ja, ko, ru); empty accepts any.
	Language string `yaml:"language,omitempty"`
	// Sources are gathered in order; the first of duplicates is kept.
	Sources []Spec `yaml:"sources"`
	// Quality overrides the thresholds of vibe.yaml for this theme.
	Quality Thresholds `yaml:"quality,omitempty"`
	// Credibility sets how sources are graded and which are kept out.
	Credibility CredibilityConfig `yaml:"credibility,omitempty"`
	// Coverage says how much of each document's text its chunks must hold
	// for the build to go on (see Coverage).
	Coverage Coverage `yaml:"coverage,omitempty"`
}

// CredibilityConfig is the credibility: section of curate.yaml.
type CredibilityConfig struct {
	// Floor is the lowest grade kept (A, B, C or D); sources graded below
	// it are dropped with their grade and reasons. Empty keeps every grade.
	Floor string `yaml:"floor,omitempty"`
}

// Coverage is the coverage: section of curate.yaml. Ingest refuses a
// document whose chunks hold less than Min of its converted characters
// (0.9 unless set), naming it and what was dropped; Allow lowers the share
// for named sources, whose shortfall is then a warning.
//
//	coverage:
//	  min: 0.9                 # every document (default 0.9)
//	  allow:
//	    - source: scans/old-register.pdf   # as listed under sources:, a
//	      min: 0.5                         # file name in source/, or a glob
//	      reason: half the pages are tables vibe cannot read
type Coverage struct {
	// Min is the least share (0..1) of a document's characters its chunks
	// must hold; nil means the default (0.9).
	Min *float64 `yaml:"min,omitempty"`
	// Allow lowers Min for the documents of named sources.
	Allow []CoverageAllow `yaml:"allow,omitempty"`
}

// CoverageAllow is one coverage.allow entry.
type CoverageAllow struct {
	// Source names the documents: a source as listed under sources:, the
	// name of a file in source/, or a glob of such names ("*.pdf").
	Source string `yaml:"source"`
	// Min is the share the chunks of those documents must hold instead.
	Min *float64 `yaml:"min"`
	// Reason says why, for the build report.
	Reason string `yaml:"reason,omitempty"`
}

// Thresholds are the optional per-theme quality thresholds. Zero means "use
// the configured default".
type Thresholds struct {
	MinChars        int     `yaml:"min_chars,omitempty"`
	MaxGarbledRatio float64 `yaml:"max_garbled_ratio,omitempty"`
	NearDuplicate   float64 `yaml:"near_duplicate,omitempty"`
}

// Spec is one sources: entry. In YAML it is either a plain string or a
// mapping {source: ..., notes: ..., ...}.
type Spec struct {
	Source string `yaml:"source"`
	Notes  string `yaml:"notes,omitempty"`
	// Include widens what a git source gathers beyond the documents vibe
	// converts: "code" adds source code, stored as text.
	Include []string `yaml:"include,omitempty"`
	// Title, Author, Publisher, Edition and Published say what the source
	// is; they go into each entry's provenance and its credibility.
	Title     string `yaml:"title,omitempty"`
	Author    string `yaml:"author,omitempty"`
	Publisher string `yaml:"publisher,omitempty"`
	Edition   string `yaml:"edition,omitempty"`
	Published string `yaml:"published,omitempty"`
	// Query is the web search that found the source and Retrieved the
	// date it did (YYYY-MM-DD): `vibe curate --research` and the copies
	// of reading-list works a search finds record them.
	Query     string `yaml:"query,omitempty"`
	Retrieved string `yaml:"retrieved,omitempty"`
}

// provenance is what the entry says of the work, for its lock entries.
func (s Spec) provenance() Provenance {
	return Provenance{Title: s.Title, Author: s.Author, Publisher: s.Publisher, Edition: s.Edition, Published: s.Published, Query: s.Query, Retrieved: s.Retrieved}
}

// UnmarshalYAML accepts the scalar and the mapping forms.
func (s *Spec) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		s.Source = n.Value
		return nil
	}
	type plain Spec
	var p plain
	if err := n.Decode(&p); err != nil {
		return err
	}
	if strings.TrimSpace(p.Source) == "" {
		return fmt.Errorf("line %d: a sources entry needs `source:` (a path, glob, URL or git repository)", n.Line)
	}
	if len(p.Include) > 0 && !isGitSource(strings.TrimSpace(p.Source)) {
		return fmt.Errorf("line %d: include: applies to git sources (github:owner/repo, git+https://, git+file://) only", n.Line)
	}
	for _, inc := range p.Include {
		switch inc {
		case IncludeCode:
		case "images":
			return fmt.Errorf("line %d: include: images: vibe reads no text from images (no OCR); make them PDFs with a text layer first", n.Line)
		default:
			return fmt.Errorf("line %d: include: %q: use code (source files, gathered as text)", n.Line, inc)
		}
	}
	*s = Spec(p)
	return nil
}

// LoadFile reads curate.yaml. A missing file returns [ErrNoCurateFile]; an
// unknown key or malformed entry is an error naming the file and line.
func LoadFile(path string) (File, error) {
	var f File
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return f, ErrNoCurateFile
	}
	if err != nil {
		return f, fmt.Errorf("read %s: %w", path, err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil && !errors.Is(err, io.EOF) {
		return f, fmt.Errorf("%s: %w (see `vibe curate --help` for the format)", path, err)
	}
	q := f.Quality
	switch {
	case q.MinChars < 0:
		return f, fmt.Errorf("%s: quality.min_chars is %d: use 0 (the default) or more", path, q.MinChars)
	case q.MaxGarbledRatio < 0 || q.MaxGarbledRatio > 1:
		return f, fmt.Errorf("%s: quality.max_garbled_ratio is %g: use a share between 0 and 1, e.g. 0.1", path, q.MaxGarbledRatio)
	case q.NearDuplicate < 0 || q.NearDuplicate > 1:
		return f, fmt.Errorf("%s: quality.near_duplicate is %g: use a similarity between 0 and 1, e.g. 0.8", path, q.NearDuplicate)
	}
	if fl := f.Credibility.Floor; fl != "" && gradeRank(fl) < 0 {
		return f, fmt.Errorf("%s: credibility.floor is %q: use A, B, C or D (sources graded below it are kept out)", path, fl)
	}
	if err := f.Coverage.validate(path); err != nil {
		return f, err
	}
	if lang := strings.ToLower(f.Language); lang != "" && !knownLanguage(lang) {
		return f, fmt.Errorf("%s: language %q: use zh, ja, ko, ru, or a Latin-script language such as en, fr, de", path, f.Language)
	}
	return f, nil
}

// knownLanguage reports whether lang (an ISO 639-1 code, optionally with a
// region such as zh-TW) can be told apart by script.
func knownLanguage(lang string) bool {
	if i := strings.IndexAny(lang, "-_"); i > 0 {
		lang = lang[:i]
	}
	switch lang {
	case "zh", "ja", "ko", "ru", "en", "fr", "de", "es", "it", "pt", "nl", "sv", "da", "no", "fi", "pl", "cs", "tr", "vi", "id", "ms", "la":
		return true
	}
	return false
}

// AppendSources adds the given sources to the sources: list of the curate.yaml
// at path (creating it when missing), skipping those already listed. The
// user's other entries and comments are kept (the file is edited as a YAML
// node tree). It reports whether the file changed; the write is atomic.
func AppendSources(path string, sources []string) (bool, error) {
	specs := make([]Spec, len(sources))
	for i, s := range sources {
		specs[i] = Spec{Source: s}
	}
	return AppendSpecs(path, specs)
}

// AppendSpecs is [AppendSources] for whole entries: an entry with only a
// source is written as a plain string, one with notes, a title, the query
// that found it and so on as a mapping.
func AppendSpecs(path string, specs []Spec) (bool, error) {
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return false, fmt.Errorf("read %s: %w", path, err)
	}
	var doc yaml.Node
	if len(bytes.TrimSpace(data)) > 0 {
		if err := yaml.Unmarshal(data, &doc); err != nil {
			return false, fmt.Errorf("%s: %w", path, err)
		}
	}
	if doc.Kind == 0 {
		doc = yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{{Kind: yaml.MappingNode, Tag: "!!map"}}}
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return false, fmt.Errorf("%s: the top level must be a mapping with a sources: list", path)
	}
	var list *yaml.Node
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == "sources" {
			list = root.Content[i+1]
		}
	}
	if list == nil {
		list = &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		root.Content = append(root.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "sources"}, list)
	}
	if list.Kind == yaml.ScalarNode && list.Tag == "!!null" {
		*list = yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
	}
	if list.Kind != yaml.SequenceNode {
		return false, fmt.Errorf("%s: line %d: sources: must be a list", path, list.Line)
	}
	have := map[string]bool{}
	for _, it := range list.Content {
		var s Spec
		if err := it.Decode(&s); err == nil {
			have[s.Source] = true
		}
	}
	changed := false
	for _, sp := range specs {
		if have[sp.Source] {
			continue
		}
		have[sp.Source] = true
		if plain := (Spec{Source: sp.Source}); sp.Notes == "" && len(sp.Include) == 0 && sp.provenance() == plain.provenance() {
			list.Content = append(list.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: sp.Source})
		} else {
			var n yaml.Node
			if err := n.Encode(sp); err != nil {
				return false, fmt.Errorf("encode %s: %w", path, err)
			}
			list.Content = append(list.Content, &n)
		}
		changed = true
	}
	if !changed {
		return false, nil
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return false, fmt.Errorf("encode %s: %w", path, err)
	}
	if err := atomicfile.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return false, err
	}
	return true, nil
}

// ErrSourceNotListed is returned by [RemoveSource] when curate.yaml does not
// list the source.
var ErrSourceNotListed = errors.New("curate: source not listed")

// RemoveSource deletes the sources: entry whose source is src (the scalar or
// the mapping form) from the curate.yaml at path, keeping the user's other
// entries and comments; the write is atomic. When no entry matches the error
// wraps [ErrSourceNotListed] and lists what is there.
func RemoveSource(path, src string) error {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("%w: %s does not exist", ErrSourceNotListed, path)
	}
	if err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	var list *yaml.Node
	if doc.Kind == yaml.DocumentNode && len(doc.Content) == 1 && doc.Content[0].Kind == yaml.MappingNode {
		root := doc.Content[0]
		for i := 0; i+1 < len(root.Content); i += 2 {
			if root.Content[i].Value == "sources" && root.Content[i+1].Kind == yaml.SequenceNode {
				list = root.Content[i+1]
			}
		}
	}
	if list == nil {
		return fmt.Errorf("%w: %s has no sources: list", ErrSourceNotListed, path)
	}
	var have []string
	for i, it := range list.Content {
		var s Spec
		if err := it.Decode(&s); err != nil {
			continue
		}
		if s.Source == src {
			list.Content = append(list.Content[:i], list.Content[i+1:]...)
			var buf bytes.Buffer
			enc := yaml.NewEncoder(&buf)
			enc.SetIndent(2)
			if err := enc.Encode(&doc); err != nil {
				return fmt.Errorf("encode %s: %w", path, err)
			}
			return atomicfile.WriteFile(path, buf.Bytes(), 0o644)
		}
		have = append(have, s.Source)
	}
	return fmt.Errorf("%w: %s lists %s, not %q", ErrSourceNotListed, path, strings.Join(have, ", "), src)
}

// validate checks the coverage: section, naming the field and what to write.
func (c Coverage) validate(path string) error {
	share := func(field string, v *float64) error {
		if v != nil && (*v < 0 || *v > 1) {
			return fmt.Errorf("%s: %s is %g: use a share between 0 and 1 of a document's characters its chunks must hold, e.g. 0.9 (90%%)", path, field, *v)
		}
		return nil
	}
	if err := share("coverage.min", c.Min); err != nil {
		return err
	}
	for i, a := range c.Allow {
		field := fmt.Sprintf("coverage.allow[%d]", i)
		if strings.TrimSpace(a.Source) == "" {
			return fmt.Errorf("%s: %s has no source: name the document as listed under sources:, by its file name in source/, or by a glob (source: old-scan.pdf)", path, field)
		}
		if a.Min == nil {
			return fmt.Errorf("%s: %s (%s) has no min: give the share of its characters its chunks must still hold, e.g. min: 0.5", path, field, a.Source)
		}
		if err := share(field+".min", a.Min); err != nil {
			return err
		}
	}
	return nil
}
