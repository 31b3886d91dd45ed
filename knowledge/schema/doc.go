// Package schema ships the JSON Schemas of the knowledge files (sop.yaml,
// patterns.yaml, rules.yaml) and of tools.yaml, embedded in the binary, and
// validates YAML documents against them, reporting each problem with its
// path in the document and its line:column in the file.
package schema
