// Package integrate is stage 4 of the knowledge build: it writes a skill's
// SKILL.md, tools/tools.yaml and meta.json from the extracted knowledge, and
// checks the skill (Check): schema, references, grounding of every item in
// its cited chunk, coverage, duplicates, contradictions, size and the
// SKILL.md front matter. Findings are rendered as text, JSON, JUnit, SARIF
// 2.1.0 or GitHub workflow annotations.
package integrate
