// Package extract distils the knowledge files of a skill (sop.yaml,
// patterns.yaml, rules.yaml) from a theme's chunks. Every item cites the
// chunk it came from and quotes a verbatim span of it; items whose quote
// cannot be found in the cited chunk are dropped, never kept.
//
// The offline extractor (Offline) is a deterministic heuristic that mines
// rule-like sentences, named configurations, warnings and enumerated
// procedures; its output says so in meta.extractor. Ids stay stable across
// rebuilds by matching items against the previous files.
package extract
