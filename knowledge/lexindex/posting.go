package lexindex

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
)

// RowSize is the most postings a row holds.
const RowSize = 128

// Posting is one chunk holding a term: its number, how often it holds the
// term, and its length in index tokens.
type Posting struct {
	Num int64
	TF  int32
	Len int32
}

// Row is a run of one term's postings, in chunk number order, and the
// figures its BM25 upper bound is computed from.
type Row struct {
	First, Last int64 // the chunk numbers of its first and last posting
	N           int   // postings
	MaxTF       int   // the highest term frequency
	MinLen      int   // the shortest chunk
	Data        []byte
}

// ErrCorrupt is returned for row data that does not decode.
var ErrCorrupt = errors.New("lexindex: corrupt posting row")

// Encoding: a row's data is a sequence of runs, each appended by one write.
// A run starts with a 0 and the offset of its first chunk number from the
// row's First; each later posting starts with its (positive) distance from
// the one before. Every posting then has its term frequency and chunk
// length. All numbers are unsigned varints, so appending a run needs
// nothing of the row but its First.

// appendRun appends ps (in number order, all from first on) to data.
func appendRun(data []byte, first int64, ps []Posting) []byte {
	for i, p := range ps {
		if i == 0 {
			data = binary.AppendUvarint(data, 0)
			data = binary.AppendUvarint(data, uint64(p.Num-first))
		} else {
			data = binary.AppendUvarint(data, uint64(p.Num-ps[i-1].Num))
		}
		data = binary.AppendUvarint(data, uint64(p.TF))
		data = binary.AppendUvarint(data, uint64(p.Len))
	}
	return data
}

// Decode appends the postings of r to dst.
func (r Row) Decode(dst []Posting) ([]Posting, error) {
	b := r.Data
	prev := r.First
	start := len(dst)
	for i := 0; i < len(b); {
		var v [4]uint64
		n := 3
		for k := 0; k < n; k++ {
			if i >= len(b) {
				return dst, ErrCorrupt
			}
			if c := b[i]; c < 0x80 { // one byte, most numbers here
				v[k] = uint64(c)
				i++
			} else {
				x, m := binary.Uvarint(b[i:])
				if m <= 0 {
					return dst, ErrCorrupt
				}
				v[k] = x
				i += m
			}
			if k == 0 && v[0] == 0 {
				n = 4 // a run's start: the offset from First follows
			}
		}
		num := prev + int64(v[0])
		tf, ln := v[1], v[2]
		if v[0] == 0 {
			num, tf, ln = r.First+int64(v[1]), v[2], v[3]
		}
		dst = append(dst, Posting{Num: num, TF: int32(tf), Len: int32(ln)})
		prev = num
	}
	if len(dst)-start != r.N {
		return dst, fmt.Errorf("%w: %d postings, the row says %d", ErrCorrupt, len(dst)-start, r.N)
	}
	return dst, nil
}

// Append adds ps (in number order, above r.Last when r holds any) to r:
// as many as fit go into r itself (when r holds any), the rest into new
// rows of at most RowSize. It returns r changed (or unchanged, when none
// fit) and the new rows.
//
// Only r's First and figures are needed: given r without its Data, the
// changed row's Data is just the run to append to the stored data (the
// PostgreSQL store appends it on the server).
func Append(r Row, ps []Posting) (Row, []Row) {
	if r.N > 0 && r.N < RowSize && len(ps) > 0 {
		take := min(RowSize-r.N, len(ps))
		r = extend(r, ps[:take])
		ps = ps[take:]
	}
	var out []Row
	for len(ps) > 0 {
		take := min(RowSize, len(ps))
		out = append(out, extend(Row{First: ps[0].Num}, ps[:take]))
		ps = ps[take:]
	}
	return r, out
}

// extend appends ps to r's data and figures.
func extend(r Row, ps []Posting) Row {
	r.Data = appendRun(append([]byte(nil), r.Data...), r.First, ps)
	for _, p := range ps {
		if r.N == 0 || int(p.TF) > r.MaxTF {
			r.MaxTF = int(p.TF)
		}
		if r.N == 0 || int(p.Len) < r.MinLen {
			r.MinLen = int(p.Len)
		}
		r.N++
		r.Last = p.Num
	}
	return r
}

// Without returns r's postings outside the chunk numbers [lo, hi] as a row
// of their own (its First may differ from r's), or no row when none
// remain.
func Without(r Row, lo, hi int64) ([]Row, error) {
	ps, err := r.Decode(nil)
	if err != nil {
		return nil, err
	}
	keep := ps[:0]
	for _, p := range ps {
		if p.Num < lo || p.Num > hi {
			keep = append(keep, p)
		}
	}
	_, rows := Append(Row{}, keep)
	return rows, nil
}

// Postings returns the postings of chunks numbered first, first+1, ... whose
// index tokens are toks[0], toks[1], ...: for each term, in term order, its
// postings in number order.
func Postings(first int64, toks [][]string) (terms []string, lists [][]Posting) {
	idx := map[string]int{}
	for i, ts := range toks {
		num := first + int64(i)
		for _, t := range ts {
			j, ok := idx[t]
			if !ok {
				j = len(terms)
				idx[t] = j
				terms = append(terms, t)
				lists = append(lists, nil)
			}
			l := lists[j]
			if n := len(l); n > 0 && l[n-1].Num == num {
				l[n-1].TF++
			} else {
				l = append(l, Posting{Num: num, TF: 1, Len: int32(len(ts))})
			}
			lists[j] = l
		}
	}
	ord := make([]int, len(terms))
	for i := range ord {
		ord[i] = i
	}
	sort.Slice(ord, func(a, b int) bool { return terms[ord[a]] < terms[ord[b]] })
	st, sl := make([]string, len(terms)), make([][]Posting, len(terms))
	for i, j := range ord {
		st[i], sl[i] = terms[j], lists[j]
	}
	return st, sl
}

// Merge returns rows, one term's in chunk number order and not
// overlapping (the rows of several segments, say), packed again into rows of
// RowSize postings but the last. A full row with no postings pending before
// it, and a last row with none, is kept as it is (its data is not decoded);
// the postings of the others are appended to new rows, in order. Rows that
// deletes left short are packed the same way.
func Merge(rows []Row) ([]Row, error) {
	var out []Row
	var pending []Posting
	for i, r := range rows {
		if len(pending) == 0 && (r.N == RowSize || i == len(rows)-1) {
			out = append(out, r)
			continue
		}
		var err error
		if pending, err = r.Decode(pending); err != nil {
			return nil, err
		}
		for len(pending) >= RowSize {
			out = append(out, extend(Row{First: pending[0].Num}, pending[:RowSize]))
			pending = pending[RowSize:]
		}
	}
	if len(pending) > 0 {
		out = append(out, extend(Row{First: pending[0].Num}, pending))
	}
	return out, nil
}
