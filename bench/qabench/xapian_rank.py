#!/usr/bin/env python3
"""The Xapian BM25 anchor of bench/qabench.

    xapian_rank.py DOCS QUERIES DBDIR

DOCS has one unit (a context, or a chunk) a line, its lexical index tokens
space-separated (vibe's knowledge/lexical); QUERIES one query a line, its
query tokens. Each unit becomes a document holding each token once per
occurrence (its wdf), in an on-disk database at DBDIR (rebuilt); each query
is the OR of its tokens, ranked by Xapian's BM25Weight with its defaults
(k1 1, k2 0, k3 1, b 0.5, min_normlen 0.5), and the first 50 units are
printed, one query a line: 0-based unit numbers, best first, space-separated
(an empty line when nothing matched).
"""
import shutil
import sys

import xapian


def main():
    docs, queries, dbdir = sys.argv[1:4]
    shutil.rmtree(dbdir, ignore_errors=True)
    db = xapian.WritableDatabase(dbdir, xapian.DB_CREATE_OR_OVERWRITE)
    with open(docs, encoding="utf-8") as f:
        for line in f:
            doc = xapian.Document()
            for tok in line.split():
                doc.add_term(tok)
            # Document ids are 1-based and given in order.
            db.add_document(doc)
    db.commit()
    db.close()
    rdb = xapian.Database(dbdir)
    enq = xapian.Enquire(rdb)
    enq.set_weighting_scheme(xapian.BM25Weight())
    # Ties break by document id, as the Go BM25 of the bench does.
    enq.set_docid_order(xapian.Enquire.ASCENDING)
    out = sys.stdout
    with open(queries, encoding="utf-8") as f:
        for line in f:
            toks = line.split()
            if not toks:
                out.write("\n")
                continue
            enq.set_query(xapian.Query(xapian.Query.OP_OR, toks))
            out.write(" ".join(str(m.docid - 1) for m in enq.get_mset(0, 50)) + "\n")


if __name__ == "__main__":
    main()
