#!/usr/bin/env python3
"""The Xapian anchor of bench/searchbench: BM25 over the same chunks and tokens.

    xapian_bm25.py DOCS QUERIES DBDIR

DOCS has one chunk a line, its lexical index tokens space-separated (vibe's
knowledge/lexical); QUERIES one query a line, its query tokens. Each chunk
becomes a document holding each token once per occurrence (its wdf), in an
on-disk database at DBDIR (rebuilt); each query is the OR of its tokens,
ranked by Xapian's BM25Weight with its defaults, top 10. Prints JSON: the
documents indexed, the queries run, and the CPU (process time) and wall
seconds of the query loop alone.
"""
import json
import shutil
import sys
import time

import xapian


def main():
    docs, queries, dbdir = sys.argv[1:4]
    shutil.rmtree(dbdir, ignore_errors=True)
    db = xapian.WritableDatabase(dbdir, xapian.DB_CREATE_OR_OVERWRITE)
    n = 0
    with open(docs, encoding="utf-8") as f:
        for line in f:
            doc = xapian.Document()
            for tok in line.split():
                doc.add_term(tok)
            db.add_document(doc)
            n += 1
    db.commit()
    db.close()
    qs = []
    with open(queries, encoding="utf-8") as f:
        for line in f:
            qs.append(line.split())
    rdb = xapian.Database(dbdir)
    enq = xapian.Enquire(rdb)
    enq.set_weighting_scheme(xapian.BM25Weight())
    hits = 0
    c0, w0 = time.process_time(), time.perf_counter()
    for toks in qs:
        enq.set_query(xapian.Query(xapian.Query.OP_OR, toks))
        for m in enq.get_mset(0, 10):
            hits += 1
    c1, w1 = time.process_time(), time.perf_counter()
    print(json.dumps({"docs": n, "queries": len(qs), "hits": hits,
                      "query_cpu_s": c1 - c0, "query_wall_s": w1 - w0}))


if __name__ == "__main__":
    main()
