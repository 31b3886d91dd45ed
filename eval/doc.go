// Package eval measures retrieval quality on question sets written for the
// shared corpus (bazi_questions.jsonl: questions with the document and
// section a reader would pick), reporting recall@5 and MRR of vector-only,
// lexical-only and hybrid search. Figures are kept in docs/retrieval.md.
package eval
