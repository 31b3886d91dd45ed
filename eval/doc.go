// Package eval measures retrieval quality on question sets written by hand
// for the shared corpus: questions_zh.jsonl (the bazi classics, three
// vernacular novels and a few web pages and PDFs) and questions_en.jsonl
// (Moby-Dick, a children's anthology, The Waste Land, a JIT paper, a Federal
// Register rule, a trustee handbook, Wikipedia and IETF pages), each naming
// the document and section a reader would pick. It reports recall@5 and
// MRR@10 of the product's vector, lexical and hybrid search against a
// reference BM25 engine with CJK n-grams (BM25), on a development half and a
// held-out half of each set (Question.HeldOut). Figures are kept in
// docs/retrieval.md.
package eval
