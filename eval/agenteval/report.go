package agenteval

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"strings"
)

// Formats are the report formats Write knows.
var Formats = []string{"text", "json", "junit", "markdown", "github"}

// Write writes rep in format.
func Write(w io.Writer, rep *Report, format string) error {
	switch format {
	case "text", "":
		return writeText(w, rep)
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	case "junit":
		return writeJUnit(w, rep)
	case "markdown":
		return writeMarkdown(w, rep)
	case "github":
		return writeGitHub(w, rep)
	}
	return fmt.Errorf("unknown format %q: use one of %s", format, strings.Join(Formats, ", "))
}

func figure(m Measure) string {
	switch m.Name {
	case MRuleMRR, MPassageMRR, MFaithfulness:
		return fmt.Sprintf("%.3f", m.Value)
	}
	return fmt.Sprintf("%.1f%%", 100*m.Value)
}

func gate(m Measure) string {
	if m.Threshold == nil {
		return "-"
	}
	if m.Name == MFaithfulness {
		return fmt.Sprintf(">= %.3f", *m.Threshold)
	}
	return fmt.Sprintf(">= %.1f%%", 100**m.Threshold)
}

func label(m Measure, rep *Report) string {
	switch m.Name {
	case MRuleHit:
		return fmt.Sprintf("rule hit@%d", rep.RulesK)
	case MRuleMRR:
		return "rule MRR@10"
	case MPassageRecall:
		return fmt.Sprintf("passage recall@%d", rep.PassagesK)
	case MPassageMRR:
		return "passage MRR@10"
	case MFactCoverage:
		return "fact coverage"
	case MTools:
		if rep.Mode == "offline" {
			return "tools (offered, args valid)"
		}
		return "tool calls"
	}
	return m.Name
}

// Summary is the one-line verdict, the last line of the text report. It
// matches the exit status of vibe eval: "pass" exits 0, "FAIL" exits 1 and
// names the gated measures below their thresholds and the regressions.
func Summary(rep *Report) string {
	met := len(rep.Cases) - len(rep.Failed)
	if rep.Pass {
		s := fmt.Sprintf("eval %s: pass (exit 0): every gated measure meets its threshold; %d of %d cases met every expectation", rep.Theme, met, len(rep.Cases))
		if n := len(rep.Failed); n > 0 {
			s += fmt.Sprintf(", %d below expectation but not gated (BELOW above)", n)
		}
		return s + fmt.Sprintf(" (%s mode)", rep.Mode)
	}
	var why []string
	for _, m := range rep.Measures {
		if !m.Pass {
			why = append(why, fmt.Sprintf("%s %s is below its threshold %s", label(m, rep), figure(m), strings.TrimPrefix(gate(m), ">= ")))
		}
	}
	if n := len(rep.Regressions); n > 0 {
		why = append(why, fmt.Sprintf("%d regressions against the baseline", n))
	}
	return fmt.Sprintf("eval %s: FAIL (exit 1): %s; %d of %d cases met every expectation (%s mode)", rep.Theme, strings.Join(why, ", "), met, len(rep.Cases), rep.Mode)
}

// caseMark is how a failed case is listed: FAIL when it is part of why the
// run fails, BELOW when it fell short only in measures that still meet
// their thresholds.
func caseMark(c CaseResult) string {
	if c.Gating {
		return "FAIL"
	}
	return "BELOW"
}

// notGated says why a BELOW case does not fail the run.
func notGated(c CaseResult, rep *Report) string {
	var names []string
	for _, n := range c.Missed {
		for _, m := range rep.Measures {
			if m.Name == n {
				names = append(names, label(m, rep))
			}
		}
	}
	if len(names) == 0 {
		return "not gated"
	}
	if len(names) > 1 {
		return "not gated: " + strings.Join(names, ", ") + " still meet their thresholds"
	}
	return "not gated: " + names[0] + " still meets its threshold"
}

func writeText(w io.Writer, rep *Report) error {
	var sb strings.Builder
	fmt.Fprintf(&sb, "%-30s %10s %6s %12s  %s\n", "measure", "value", "n", "threshold", "")
	for _, m := range rep.Measures {
		mark := "ok"
		if !m.Pass {
			mark = "BELOW"
		}
		fmt.Fprintf(&sb, "%-30s %10s %6d %12s  %s\n", label(m, rep), figure(m), m.N, gate(m), mark)
	}
	for _, s := range rep.Skipped {
		fmt.Fprintf(&sb, "skipped: %s\n", s)
	}
	for _, c := range rep.Cases {
		if c.Pass {
			continue
		}
		if c.Gating {
			fmt.Fprintf(&sb, "FAIL %s (%s:%d)\n", c.ID, rep.File, c.Line)
		} else {
			fmt.Fprintf(&sb, "BELOW %s (%s:%d), %s\n", c.ID, rep.File, c.Line, notGated(c, rep))
		}
		for _, f := range c.Failures {
			fmt.Fprintf(&sb, "  - %s\n", f)
		}
	}
	for _, r := range rep.Regressions {
		fmt.Fprintf(&sb, "REGRESSION %s\n", r)
	}
	sb.WriteString(Summary(rep) + "\n")
	_, err := io.WriteString(w, sb.String())
	return err
}

func writeMarkdown(w io.Writer, rep *Report) error {
	var sb strings.Builder
	icon := "✅"
	if !rep.Pass {
		icon = "❌"
	}
	fmt.Fprintf(&sb, "### %s %s\n\n", icon, Summary(rep))
	sb.WriteString("| measure | value | n | threshold | |\n|---|---:|---:|---:|---|\n")
	for _, m := range rep.Measures {
		mark := "ok"
		if !m.Pass {
			mark = "**below**"
		}
		fmt.Fprintf(&sb, "| %s | %s | %d | %s | %s |\n", label(m, rep), figure(m), m.N, gate(m), mark)
	}
	if len(rep.Skipped) > 0 {
		sb.WriteString("\n")
		for _, s := range rep.Skipped {
			fmt.Fprintf(&sb, "- skipped: %s\n", mdEscape(s))
		}
	}
	if len(rep.Failed) > 0 {
		sb.WriteString("\n<details><summary>Failed cases</summary>\n\n")
		for _, c := range rep.Cases {
			if c.Pass {
				continue
			}
			fmt.Fprintf(&sb, "- %s **%s** (`%s:%d`)\n", caseMark(c), mdEscape(c.ID), rep.File, c.Line)
			for _, f := range c.Failures {
				fmt.Fprintf(&sb, "  - %s\n", mdEscape(f))
			}
		}
		sb.WriteString("\n</details>\n")
	}
	for _, r := range rep.Regressions {
		fmt.Fprintf(&sb, "- regression: %s\n", mdEscape(r))
	}
	_, err := io.WriteString(w, sb.String())
	return err
}

func mdEscape(s string) string {
	r := strings.NewReplacer("|", `\|`, "<", "&lt;", ">", "&gt;", "\n", " ")
	return r.Replace(s)
}

func ghEscape(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

func ghProp(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(s)
}

// writeGitHub writes workflow commands: one error annotation per failed
// case at its line in the eval file, and a notice with the summary.
func writeGitHub(w io.Writer, rep *Report) error {
	var sb strings.Builder
	for _, c := range rep.Cases {
		if c.Pass {
			continue
		}
		level, msg := "error", strings.Join(c.Failures, "; ")
		if !c.Gating {
			level, msg = "warning", msg+" ("+notGated(c, rep)+")"
		}
		fmt.Fprintf(&sb, "::%s file=%s,line=%d,title=%s::%s\n", level, ghProp(rep.File), c.Line, ghProp("vibe eval "+c.ID), ghEscape(msg))
	}
	for _, m := range rep.Measures {
		if !m.Pass {
			fmt.Fprintf(&sb, "::error title=%s::%s\n", ghProp("vibe eval "+m.Name), ghEscape(fmt.Sprintf("%s is %s, below %s", label(m, rep), figure(m), gate(m))))
		}
	}
	for _, r := range rep.Regressions {
		fmt.Fprintf(&sb, "::error title=vibe eval regression::%s\n", ghEscape(r))
	}
	fmt.Fprintf(&sb, "::notice title=vibe eval::%s\n", ghEscape(Summary(rep)))
	_, err := io.WriteString(w, sb.String())
	return err
}

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Time       string          `xml:"time,attr"`
	Properties []junitProperty `xml:"properties>property,omitempty"`
	Cases      []junitCase     `xml:"testcase"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	ClassName string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Body    string `xml:",chardata"`
}

// writeJUnit writes one test case per eval case and one per gated measure
// (so a measure below its threshold fails the suite in a JUnit consumer
// even when every case passed).
func writeJUnit(w io.Writer, rep *Report) error {
	s := junitSuite{Name: "vibe eval " + rep.Theme, Time: "0"}
	s.Properties = append(s.Properties, junitProperty{"mode", rep.Mode})
	for _, sk := range rep.Skipped {
		s.Properties = append(s.Properties, junitProperty{"skipped", sk})
	}
	for _, c := range rep.Cases {
		jc := junitCase{Name: c.ID, ClassName: "vibe.eval." + rep.Theme, Time: "0"}
		switch {
		case !c.Pass && c.Gating:
			jc.Failure = &junitFailure{Message: c.Failures[0], Type: "eval", Body: fmt.Sprintf("%s:%d\n%s", rep.File, c.Line, strings.Join(c.Failures, "\n"))}
			s.Failures++
		case !c.Pass:
			// Below expectation but not gated: reported, not a failure, as
			// the exit status says.
			jc.SystemOut = fmt.Sprintf("below expectation, %s\n%s:%d\n%s", notGated(c, rep), rep.File, c.Line, strings.Join(c.Failures, "\n"))
		}
		s.Cases = append(s.Cases, jc)
	}
	for _, m := range rep.Measures {
		if m.Threshold == nil {
			continue
		}
		jc := junitCase{Name: "measure " + m.Name, ClassName: "vibe.eval." + rep.Theme + ".measures", Time: "0"}
		if !m.Pass {
			jc.Failure = &junitFailure{Message: fmt.Sprintf("%s is %s, below %s", label(m, rep), figure(m), gate(m)), Type: "threshold"}
			s.Failures++
		}
		s.Cases = append(s.Cases, jc)
	}
	for _, r := range rep.Regressions {
		s.Cases = append(s.Cases, junitCase{Name: "regression", ClassName: "vibe.eval." + rep.Theme + ".baseline", Time: "0",
			Failure: &junitFailure{Message: r, Type: "regression"}})
		s.Failures++
	}
	s.Tests = len(s.Cases)
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(junitSuites{Name: "vibe eval", Tests: s.Tests, Failures: s.Failures, Suites: []junitSuite{s}}); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// LoadReport reads a report written with --format json (a baseline).
func LoadReport(path string) (*Report, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r Report
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: not a `vibe eval --format json` report: %v", path, err)
	}
	if r.Cases == nil || r.Measures == nil {
		return nil, fmt.Errorf("%s: not a `vibe eval --format json` report (no cases or measures)", path)
	}
	return &r, nil
}

// CompareBaseline records in rep what got worse than base: a case that
// passed there and fails now, a measure lower than there. Any regression
// fails the run.
func CompareBaseline(rep, base *Report) {
	passed := map[string]bool{}
	for _, c := range base.Cases {
		passed[c.ID] = c.Pass
	}
	for _, c := range rep.Cases {
		if !c.Pass && passed[c.ID] {
			rep.Regressions = append(rep.Regressions, fmt.Sprintf("case %s passed in the baseline and fails now", c.ID))
		}
	}
	old := map[string]float64{}
	for _, m := range base.Measures {
		old[m.Name] = m.Value
	}
	for _, m := range rep.Measures {
		if v, ok := old[m.Name]; ok && m.Value+1e-9 < v {
			rep.Regressions = append(rep.Regressions, fmt.Sprintf("%s fell from %s to %s", label(m, rep), figure(Measure{Name: m.Name, Value: v}), figure(m)))
		}
	}
	if len(rep.Regressions) > 0 {
		rep.Pass = false
	}
}
