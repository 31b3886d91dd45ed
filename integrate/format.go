package integrate

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"net/url"
	"path/filepath"
	"strings"
)

// Formats lists the report formats Write accepts.
var Formats = []string{"text", "json", "junit", "sarif", "github"}

// Write renders the report in format.
func Write(w io.Writer, rep Report, format string) error {
	switch format {
	case "", "text":
		return writeText(w, rep)
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(rep)
	case "junit":
		return writeJUnit(w, rep)
	case "sarif":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(SARIF(rep))
	case "github":
		return writeGitHub(w, rep)
	}
	return fmt.Errorf("unknown format %q: use %s", format, strings.Join(Formats, ", "))
}

// SummaryLine is a one-line summary of the report.
func SummaryLine(rep Report) string {
	s := rep.Summary
	line := fmt.Sprintf("check %s: %d errors, %d warnings, %d notes", rep.Theme, s.Errors, s.Warnings, s.Notes)
	if s.Uncovered > 0 {
		// Every uncovered passage is a note; say how many of the notes they are.
		line += fmt.Sprintf(" (%d of them possible missing rules)", s.Uncovered)
	}
	line += fmt.Sprintf("; %d rules", s.Rules)
	switch {
	case rep.Coverage != nil && s.RuleLike == 0:
		line += "; no rule-like passages in the sources"
	case rep.Coverage != nil:
		line += fmt.Sprintf(", citing %.1f%% of %d rule-like passages and %.1f%% of %d sections stating rules",
			s.Coverage, s.RuleLike, s.SectionCoverage, s.Sections)
	}
	return line
}

// TopGaps is how many uncovered sections the text and github formats list;
// sarif has one result for each section and json every uncovered passage.
const TopGaps = 10

const missingRule = "coverage.missing-rule"

func writeText(w io.Writer, rep Report) error {
	for _, f := range rep.Findings {
		if f.Check == missingRule {
			continue // summarised by section below
		}
		item := ""
		if f.Item != "" {
			item = " [" + f.Item + "]"
		}
		if _, err := fmt.Fprintf(w, "%s:%d:%d: %s %s %s%s: %s\n", f.File, f.Line, f.Column, f.Severity, f.RuleID, f.Check, item, f.Message); err != nil {
			return err
		}
	}
	if cov := rep.Coverage; cov != nil && len(cov.Gaps) > 0 {
		var b strings.Builder
		fmt.Fprintf(&b, "coverage: the rules cite %d of %d rule-like passages and %d of %d sections that state rules.\n", cov.Covered, cov.Passages, cov.CoveredSections, cov.Sections)
		b.WriteString("  (A skill keeps its strongest rules, 55-90 by the design's tier targets; search_knowledge reaches the rest\n" +
			"  of the sources. Read the sections below for rules worth adding to rules.yaml.)\n")
		fmt.Fprintf(&b, "sections with the most possible missing rules:\n")
		for i, g := range cov.Gaps {
			if i == TopGaps {
				rest, n := 0, 0
				for _, g := range cov.Gaps[i:] {
					rest += g.Uncovered
					n++
				}
				fmt.Fprintf(&b, "  … %d more sections with %d passages: see --format sarif for every section, json for every passage\n", n, rest)
				break
			}
			where := g.Section
			if g.File != "" {
				where = fmt.Sprintf("%s:%d  %s", g.File, g.Line, g.Section)
			}
			cited := fmt.Sprintf("%d rules cite it", g.Cited)
			switch g.Cited {
			case 0:
				cited = "no rule cites it"
			case 1:
				cited = "1 rule cites it"
			}
			fmt.Fprintf(&b, "  %s: %d of %d rule-like passages uncovered, %s\n", where, g.Uncovered, g.Passages, cited)
			for _, e := range g.Examples[:min(2, len(g.Examples))] {
				fmt.Fprintf(&b, "      %q\n", e)
			}
		}
		if _, err := io.WriteString(w, b.String()); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintln(w, SummaryLine(rep))
	return err
}

func ghEscape(s string) string {
	r := strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A")
	return r.Replace(s)
}

func ghProp(s string) string {
	r := strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C")
	return r.Replace(s)
}

func writeGitHub(w io.Writer, rep Report) error {
	for _, f := range rep.Findings {
		if f.Check == missingRule {
			continue // one notice per section below, not one per passage
		}
		kind := map[Severity]string{SevError: "error", SevWarning: "warning", SevNote: "notice"}[f.Severity]
		title := f.RuleID + " " + f.Check
		if _, err := fmt.Fprintf(w, "::%s file=%s,line=%d,col=%d,title=%s::%s\n", kind, ghProp(f.File), f.Line, f.Column, ghProp(title), ghEscape(f.Message)); err != nil {
			return err
		}
	}
	if cov := rep.Coverage; cov != nil {
		for i, g := range cov.Gaps {
			if i == TopGaps || g.File == "" {
				break
			}
			if _, err := fmt.Fprintf(w, "::notice file=%s,line=%d,title=%s::%s\n", ghProp(g.File), g.Line, ghProp("VIBE020 "+missingRule), ghEscape(gapMessage(g))); err != nil {
				return err
			}
		}
	}
	_, err := fmt.Fprintln(w, SummaryLine(rep))
	return err
}

// gapMessage says what a section's possible missing rules are.
func gapMessage(g SectionGap) string {
	return fmt.Sprintf("%d of %d rule-like passages of %s are cited by no rule, e.g. %q", g.Uncovered, g.Passages, g.Section, g.Examples[0])
}

type junitSuites struct {
	XMLName xml.Name     `xml:"testsuites"`
	Suites  []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	ClassName string        `xml:"classname,attr"`
	File      string        `xml:"file,attr,omitempty"`
	Line      int           `xml:"line,attr,omitempty"`
	Failure   *junitFailure `xml:"failure,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Body    string `xml:",chardata"`
}

func writeJUnit(w io.Writer, rep Report) error {
	s := junitSuite{Name: "vibe check " + rep.Theme}
	for _, f := range rep.Findings {
		if f.Severity == SevNote {
			continue
		}
		s.Cases = append(s.Cases, junitCase{
			Name: fmt.Sprintf("%s %s %s", f.RuleID, f.Check, f.Item), ClassName: f.File, File: f.File, Line: f.Line,
			Failure: &junitFailure{Message: f.Message, Type: string(f.Severity), Body: fmt.Sprintf("%s:%d:%d: %s", f.File, f.Line, f.Column, f.Message)},
		})
		s.Failures++
	}
	if len(s.Cases) == 0 {
		s.Cases = append(s.Cases, junitCase{Name: "vibe check", ClassName: rep.Theme})
	}
	s.Tests = len(s.Cases)
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(junitSuites{Suites: []junitSuite{s}}); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// SARIF builds a SARIF 2.1.0 log of the report.
func SARIF(rep Report) map[string]any {
	rules := []any{}
	idx := map[string]int{}
	results := []any{}
	// Possible missing rules are one result per section, not per passage:
	// code scanning keeps 5,000 results of a run and rejects a log of more
	// than 25,000, which a few books' passages would exceed.
	gapOf := map[string]*SectionGap{} // chunk id -> its section's gap
	if rep.Coverage != nil {
		for i := range rep.Coverage.Gaps {
			for _, id := range rep.Coverage.Gaps[i].Chunks {
				gapOf[id] = &rep.Coverage.Gaps[i]
			}
		}
	}
	gapDone := map[*SectionGap]bool{}
	for _, f := range rep.Findings {
		var gap *SectionGap
		if f.Check == missingRule {
			if gap = gapOf[f.Item]; gap != nil {
				if gapDone[gap] {
					continue
				}
				gapDone[gap] = true
			}
		}
		key := f.RuleID + "/" + f.Check
		i, ok := idx[key]
		if !ok {
			i = len(rules)
			idx[key] = i
			rules = append(rules, map[string]any{
				"id":               f.RuleID,
				"name":             f.Check,
				"shortDescription": map[string]any{"text": f.Check},
			})
		}
		level := string(f.Severity)
		line, col := max(f.Line, 1), max(f.Column, 1)
		res := map[string]any{
			"ruleId":    f.RuleID,
			"ruleIndex": i,
			"level":     level,
			"message":   map[string]any{"text": f.Message},
			"locations": []any{map[string]any{
				"physicalLocation": map[string]any{
					"artifactLocation": map[string]any{"uri": uriOf(f.File)},
					"region":           map[string]any{"startLine": line, "startColumn": col},
				},
			}},
		}
		switch {
		case gap != nil:
			res["message"] = map[string]any{"text": gapMessage(*gap)}
			res["properties"] = map[string]any{"check": f.Check, "section": gap.Section, "uncovered": gap.Uncovered,
				"passages": gap.Passages, "rules_citing": gap.Cited, "chunks": gap.Chunks}
		case f.Item != "":
			res["properties"] = map[string]any{"item": f.Item, "check": f.Check}
		}
		results = append(results, res)
	}
	return map[string]any{
		"$schema": "https://json.schemastore.org/sarif-2.1.0.json",
		"version": "2.1.0",
		"runs": []any{map[string]any{
			"tool": map[string]any{"driver": map[string]any{
				"name":           "vibe check",
				"informationUri": "https://github.com/vibelife/vibe",
				"rules":          rules,
			}},
			"results": results,
			// Columns are yaml.v3's: characters, not UTF-16 code units.
			"columnKind": "unicodeCodePoints",
		}},
	}
}

// uriOf turns a slash-separated relative path into a URI reference, each
// segment percent-encoded (RFC 3986), as SARIF artifactLocation.uri requires.
func uriOf(p string) string {
	segs := strings.Split(filepath.ToSlash(p), "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/")
}
