// Package convert turns source documents (PDF, EPUB, DOCX, HTML, TXT/Markdown
// in any common encoding) into clean Markdown with real headings, and reads
// and writes the converted files.
//
// It consumes the originals gathered by curate and produces one [Document] per
// source, written as knowledge/<theme>/converted/<name>.md: YAML front matter
// (source, sha256, format, title, converter version, quality report) followed
// by the Markdown body. Downstream stages read converted files back with
// [ReadFile]; character offsets they record are offsets into the whole file.
package convert
