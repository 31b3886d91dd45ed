package lexindex

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
)

// index is an in-memory store of rows, written the way a store writes
// them: each document's postings appended to its terms' last rows.
type index struct {
	rows  map[string][]Row
	st    Stats
	next  int64
	spans map[int][2]int64 // document -> its chunk numbers
	toks  map[int][][]string
}

func newIndex() *index {
	return &index{rows: map[string][]Row{}, next: 1, spans: map[int][2]int64{}, toks: map[int][][]string{}}
}

func (x *index) add(doc int, toks [][]string) {
	first := x.next
	x.next += int64(len(toks))
	x.spans[doc] = [2]int64{first, x.next - 1}
	x.toks[doc] = toks
	terms, lists := Postings(first, toks)
	for i, t := range terms {
		rs := x.rows[t]
		var last Row
		if len(rs) > 0 {
			last = rs[len(rs)-1]
		}
		changed, more := Append(last, lists[i])
		if len(rs) > 0 {
			rs[len(rs)-1] = changed
		}
		x.rows[t] = append(rs, more...)
	}
	for _, ts := range toks {
		x.st.Chunks++
		x.st.Tokens += int64(len(ts))
	}
}

func (x *index) remove(t *testing.T, doc int) {
	span := x.spans[doc]
	for term, rs := range x.rows {
		var out []Row
		for _, r := range rs {
			if r.Last < span[0] || r.First > span[1] {
				out = append(out, r)
				continue
			}
			rest, err := Without(r, span[0], span[1])
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, rest...)
		}
		x.rows[term] = out
	}
	for _, ts := range x.toks[doc] {
		x.st.Chunks--
		x.st.Tokens -= int64(len(ts))
	}
	delete(x.spans, doc)
	delete(x.toks, doc)
}

func (x *index) terms(q []string) []Term {
	out := make([]Term, len(q))
	for i, t := range q {
		out[i] = Term{Rows: x.rows[t]}
	}
	return out
}

// zipfDoc returns the tokens of n chunks of about size tokens over vocab,
// drawn by z, a share mix of them from topic.
func randomDoc(r *rand.Rand, z *rand.Zipf, vocab []string, topic []string, n, size int) [][]string {
	out := make([][]string, n)
	for i := range out {
		l := size/2 + r.IntN(size)
		for j := 0; j < l; j++ {
			w := vocab[z.Uint64()]
			if len(topic) > 0 && r.Float64() < 0.2 {
				w = topic[r.IntN(len(topic))]
			}
			out[i] = append(out[i], w)
		}
	}
	return out
}

// TestTopKEqualsExhaustive checks TopK against scoring every posting, on a
// Zipf corpus (rare topic words and common ones) and on a tiny vocabulary
// where every chunk holds every query term (many equal scores), with
// documents of one chunk to 600 (rows filled across documents and cut
// inside them), after deletes too.
func TestTopKEqualsExhaustive(t *testing.T) {
	for _, tc := range []struct {
		name  string
		vocab int
		size  int
	}{{"zipf", 3000, 60}, {"tiny", 32, 40}} {
		t.Run(tc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, uint64(tc.vocab)))
			vocab := make([]string, tc.vocab)
			for i := range vocab {
				vocab[i] = fmt.Sprintf("w%d", i)
			}
			z := rand.NewZipf(r, 1.07, 2, uint64(len(vocab)-1))
			x := newIndex()
			var topics [][]string
			for d := 0; d < 120; d++ {
				var topic []string
				if tc.vocab > 100 {
					for i := 0; i < 10; i++ {
						topic = append(topic, vocab[50+r.IntN(2000)])
					}
				}
				topics = append(topics, topic)
				n := 1 + r.IntN(20)
				if d%17 == 0 {
					n = 300 + r.IntN(300)
				}
				x.add(d, randomDoc(r, z, vocab, topic, n, tc.size))
			}
			check := func(label string) {
				t.Helper()
				for q := 0; q < 60; q++ {
					var query []string
					if tp := topics[r.IntN(len(topics))]; len(tp) > 0 {
						query = append(query, tp[r.IntN(len(tp))], tp[r.IntN(len(tp))])
					} else {
						query = append(query, vocab[r.IntN(len(vocab))], vocab[r.IntN(len(vocab))])
					}
					query = append(query, vocab[r.IntN(min(200, len(vocab)))], "absent")
					if q%10 == 0 { // a long query: 40 more tokens
						for i := 0; i < 40; i++ {
							query = append(query, vocab[r.IntN(len(vocab))])
						}
					}
					terms := x.terms(query)
					want, err := Exhaustive(terms, x.st)
					if err != nil {
						t.Fatal(err)
					}
					checkTermBits(t, terms, want)
					for _, k := range []int{1, 10, 50} {
						got, err := TopK(terms, x.st, k)
						if err != nil {
							t.Fatal(err)
						}
						n := min(k, len(want))
						if len(got) < n {
							t.Fatalf("%s %v k %d: %d hits, want at least %d", label, query, k, len(got), n)
						}
						// The k best, then every tie of the k-th.
						end := n
						for end < len(want) && n > 0 && want[end].Score == want[n-1].Score {
							end++
						}
						if !reflect.DeepEqual(got, want[:end]) {
							t.Fatalf("%s %v k %d:\n got %v\nwant %v", label, query, k, got, want[:end])
						}
					}
				}
			}
			check("written")
			for d := 0; d < 120; d += 7 {
				x.remove(t, d)
			}
			check("after deletes")
		})
	}
}

func TestRowsRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var all []Posting
	var rows []Row
	num := int64(5)
	for w := 0; w < 50; w++ {
		var ps []Posting
		for i := r.IntN(90); i >= 0; i-- {
			num += 1 + int64(r.IntN(1000))
			ps = append(ps, Posting{Num: num, TF: int32(1 + r.IntN(300)), Len: int32(r.IntN(100000))})
		}
		all = append(all, ps...)
		var last Row
		if len(rows) > 0 {
			last = rows[len(rows)-1]
		}
		changed, more := Append(last, ps)
		if len(rows) > 0 {
			rows[len(rows)-1] = changed
		}
		rows = append(rows, more...)
	}
	var got []Posting
	for i, row := range rows {
		if row.N > RowSize || row.N == 0 {
			t.Fatalf("row %d holds %d postings", i, row.N)
		}
		if i > 0 && row.First <= rows[i-1].Last {
			t.Fatalf("row %d starts at %d, inside row %d ending at %d", i, row.First, i-1, rows[i-1].Last)
		}
		before := len(got)
		var err error
		if got, err = row.Decode(got); err != nil {
			t.Fatal(err)
		}
		mtf, mlen := 0, 1<<62
		for _, p := range got[before:] {
			mtf, mlen = max(mtf, int(p.TF)), min(mlen, int(p.Len))
		}
		if row.First != got[before].Num || row.Last != got[len(got)-1].Num || row.MaxTF != mtf || row.MinLen != mlen {
			t.Fatalf("row %d figures %+v do not match its postings", i, row)
		}
	}
	if !reflect.DeepEqual(got, all) {
		t.Fatalf("decoded postings differ from the written ones")
	}
	if _, err := (Row{First: 1, N: 1, Data: []byte{0x80}}).Decode(nil); err == nil {
		t.Fatalf("truncated data decoded")
	}
}

// TestAppendWithoutData: appending to a row given without its data yields
// the run that, appended to the stored data, makes the row Append gives
// with the data.
func TestAppendWithoutData(t *testing.T) {
	var ps []Posting
	for i := int64(0); i < 300; i++ {
		ps = append(ps, Posting{Num: 10 + 3*i, TF: int32(1 + i%5), Len: int32(20 + i%13)})
	}
	_, rows := Append(Row{}, ps[:70])
	stored := rows[0]
	whole, moreWhole := Append(stored, ps[70:])
	bare := stored
	bare.Data = nil
	run, moreBare := Append(bare, ps[70:])
	joined := run
	joined.Data = append(append([]byte(nil), stored.Data...), run.Data...)
	if !reflect.DeepEqual(joined, whole) || !reflect.DeepEqual(moreBare, moreWhole) {
		t.Fatalf("without data: %+v and %d rows; with: %+v and %d rows", joined, len(moreBare), whole, len(moreWhole))
	}
	got, err := joined.Decode(nil)
	if err != nil || !reflect.DeepEqual(got, ps[:RowSize]) {
		t.Fatalf("the joined row decodes to %d postings (%v), want the first %d", len(got), err, RowSize)
	}
}

// TestMergePacksRows: the rows of several segments of one term, some cut
// short by deletes, merge into rows holding the same postings in order,
// every row full but the last, and figures that match their postings.
func TestMergePacksRows(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for round := 0; round < 200; round++ {
		var all []Posting
		var rows []Row
		num := int64(1)
		for seg := r.IntN(6); seg >= 0; seg-- {
			var ps []Posting
			for i := r.IntN(400); i >= 0; i-- {
				num += 1 + int64(r.IntN(20))
				ps = append(ps, Posting{Num: num, TF: int32(1 + r.IntN(9)), Len: int32(1 + r.IntN(500))})
			}
			_, segRows := Append(Row{}, ps)
			if r.IntN(3) == 0 { // a deleted document's numbers
				lo := ps[r.IntN(len(ps))].Num
				hi := lo + int64(r.IntN(300))
				var kept []Row
				for _, row := range segRows {
					if row.Last < lo || row.First > hi {
						kept = append(kept, row)
						continue
					}
					rest, err := Without(row, lo, hi)
					if err != nil {
						t.Fatal(err)
					}
					kept = append(kept, rest...)
				}
				segRows = kept
				keep := ps[:0:0]
				for _, p := range ps {
					if p.Num < lo || p.Num > hi {
						keep = append(keep, p)
					}
				}
				ps = keep
			}
			all = append(all, ps...)
			rows = append(rows, segRows...)
		}
		merged, err := Merge(rows)
		if err != nil {
			t.Fatal(err)
		}
		var got []Posting
		for i, row := range merged {
			if row.N == 0 || row.N > RowSize || (i < len(merged)-1 && row.N != RowSize) {
				t.Fatalf("round %d: row %d of %d holds %d postings", round, i, len(merged), row.N)
			}
			before := len(got)
			if got, err = row.Decode(got); err != nil {
				t.Fatal(err)
			}
			mtf, mlen := 0, 1<<62
			for _, p := range got[before:] {
				mtf, mlen = max(mtf, int(p.TF)), min(mlen, int(p.Len))
			}
			if row.First != got[before].Num || row.Last != got[len(got)-1].Num || row.MaxTF != mtf || row.MinLen != mlen {
				t.Fatalf("round %d: row %d figures %+v do not match its postings", round, i, row)
			}
		}
		if len(all) == 0 {
			all = nil
		}
		if !reflect.DeepEqual(got, all) {
			t.Fatalf("round %d: merged rows hold %d postings, the segments %d", round, len(got), len(all))
		}
	}
}

// checkTermBits checks each hit's Terms against the terms' postings: bit i
// set exactly when terms[i] (of the first 64) holds the chunk.
func checkTermBits(t *testing.T, terms []Term, hits []Hit) {
	t.Helper()
	want := map[int64]uint64{}
	for i, tm := range terms {
		if i >= 64 {
			break
		}
		for _, r := range tm.Rows {
			ps, err := r.Decode(nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range ps {
				want[p.Num] |= 1 << i
			}
		}
	}
	for _, h := range hits {
		if h.Terms != want[h.Num] {
			t.Fatalf("chunk %d: terms %b, want %b", h.Num, h.Terms, want[h.Num])
		}
	}
}
