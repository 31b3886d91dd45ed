package curate

import (
	"cmp"
	"slices"
	"unicode/utf8"
)

// Curate compares sources in two places: each new source against the kept
// ones for the near-duplicate test (estimated similarity at least
// NearDuplicate), and, when grading, every pair of the same work
// (similarity at least sameWorkSimilarity, or named alike) for their
// agreement. Comparing every pair grows with the square of the library; the
// candidates are found instead through indexes of the MinHash signatures
// and of the file names, and each candidate is then checked with the same
// comparison as before. Both indexes are exact on the estimate the
// decisions use, not probabilistic: similarity(a, b) is the share of the
// 128 slots in which the two signatures agree, so it reaches a threshold t
// exactly when they agree in at least s(t) slots (minSameSlots), and every
// pair that does is a candidate. The decisions are those of comparing every
// pair.
//
// The near-duplicate test cuts the signatures into bands (locality-
// sensitive hashing, bandIndex): two signatures that disagree in at most
// m = 128 - s(t) slots leave at least one of m+1 disjoint bands untouched,
// where they are equal and share its bucket. At the default threshold 0.8
// that is 26 bands, 24 of 5 slots and 2 of 4, and a pair of unrelated books
// (estimated similarity 0.03) shares a bucket with odds of about
// 24 x 0.03^5 + 2 x 0.03^4, two in a million. Sources arrive one by one,
// and each is looked up before it is added.
//
// Banding at sameWorkSimilarity (0.2) would take 103 bands, mostly of one
// slot, and unrelated books share a slot's shingle often enough (a common
// one has the least hash in some slots) that nearly every pair would be a
// candidate. The grading step knows every signature before it starts, so it
// uses prefix filtering instead (similarPairs; Chaudhuri, Ganti and
// Kaushik, "A primitive operator for similarity joins", ICDE 2006): each
// slot's value is a token, the tokens are ordered rarest first across the
// library, and each signature is indexed by its first 128 - s(t) + 1. Two
// signatures sharing s(t) tokens share the rarest of those, and it is in
// both prefixes; the 25 commonest tokens of each signature, those most
// books share, are left out of the index.

// minSameSlots is the number of agreeing slots at and above which
// similarity reaches t: the least s with s/minhashSize >= t, computed as
// similarity computes it; minhashSize+1 when no s does.
func minSameSlots(t float64) int {
	for s := 0; s <= minhashSize; s++ {
		if float64(s)/minhashSize >= t {
			return s
		}
	}
	return minhashSize + 1
}

// bandIndex holds signatures by band, so that the signatures whose
// similarity to a query's reaches its threshold are found without comparing
// the query with every one.
type bandIndex struct {
	// bands are the slot ranges [lo, hi), one per band.
	bands [][2]int
	// all is set when every signature qualifies (a threshold of 0 or
	// less); none when none can (a threshold above 1).
	all, none bool
	ids       []int32
	buckets   map[uint64][]int32
	// stamp marks the ids a query has already yielded.
	stamp []uint32
	query uint32
}

// newBandIndex returns an index whose candidates include every added
// signature with similarity at least t to the query's.
func newBandIndex(t float64) *bandIndex {
	x := &bandIndex{buckets: map[uint64][]int32{}}
	s := minSameSlots(t)
	switch {
	case s == 0:
		x.all = true
		return x
	case s > minhashSize:
		x.none = true
		return x
	}
	b := minhashSize - s + 1 // one more band than the slots that may disagree
	lo := 0
	for i := 0; i < b; i++ {
		hi := lo + minhashSize/b
		if i < minhashSize%b {
			hi++
		}
		x.bands = append(x.bands, [2]int{lo, hi})
		lo = hi
	}
	return x
}

// bandKey hashes band i of sig; equal bands give equal keys, and a
// collision of unequal ones only adds a candidate, which is checked.
func bandKey(i int, sig *signature, lo, hi int) uint64 {
	h := uint64(i+1) * 0x9E3779B97F4A7C15
	for _, v := range sig[lo:hi] {
		h ^= v
		h *= 0xff51afd7ed558ccd
		h ^= h >> 32
	}
	return h
}

// add records signature sig under id (ids need not be dense, but small).
func (x *bandIndex) add(id int32, sig *signature) {
	if x.none {
		return
	}
	x.ids = append(x.ids, id)
	if x.all {
		return
	}
	for i, b := range x.bands {
		k := bandKey(i, sig, b[0], b[1])
		x.buckets[k] = append(x.buckets[k], id)
	}
}

// candidates calls fn once for each added id that shares a band with sig,
// which includes every one whose similarity to sig reaches the threshold.
func (x *bandIndex) candidates(sig *signature, fn func(id int32)) {
	if x.none {
		return
	}
	if x.all {
		for _, id := range x.ids {
			fn(id)
		}
		return
	}
	x.query++
	for i, b := range x.bands {
		for _, id := range x.buckets[bandKey(i, sig, b[0], b[1])] {
			if int(id) >= len(x.stamp) {
				x.stamp = append(x.stamp, make([]uint32, int(id)+1-len(x.stamp))...)
			}
			if x.stamp[id] == x.query {
				continue
			}
			x.stamp[id] = x.query
			fn(id)
		}
	}
}

// maxNamesakes bounds the sources a file name may relate to and still
// name a work: a name that equals, holds or is held by more than this many
// other sources' names (book00001.md ... book01500.md are all "book";
// index.md in every directory of a repository) names a kind of file, not
// a work, and pairs it makes are not compared for it (they still are when
// their texts are alike).
const maxNamesakes = 8

// namePairs returns the pairs of items (indices, the lower first) whose
// file names hold one another as sameTitle reads them, leaving out the
// names with more than maxNamesakes namesakes; ok says which items take
// part. Names are compared by their titleKey, and "a holds b" is found by
// looking up each stretch of a's key, of every length some key has, among
// the keys: the work grows with the names' lengths, not with the pairs.
func namePairs(keys []string, ok func(i int) bool) (pairs [][2]int32, generic map[string]bool) {
	byKey := map[string][]int32{}
	for i, k := range keys {
		if ok(i) && utf8.RuneCountInString(k) >= 2 {
			byKey[k] = append(byKey[k], int32(i))
		}
	}
	lengths := map[int]bool{}
	for k := range byKey {
		lengths[utf8.RuneCountInString(k)] = true
	}
	var lens []int
	for l := range lengths {
		lens = append(lens, l)
	}
	slices.Sort(lens)
	distinct := make([]string, 0, len(byKey))
	for k := range byKey {
		distinct = append(distinct, k)
	}
	slices.Sort(distinct)
	// subs[k] are the other keys k holds.
	subs := map[string][]string{}
	up := map[string]int{} // items whose keys hold k
	for _, k := range distinct {
		starts := make([]int, 0, len(k)+1)
		for i := range k {
			starts = append(starts, i)
		}
		starts = append(starts, len(k))
		n := len(starts) - 1 // runes
		seen := map[string]bool{}
		for _, l := range lens {
			if l >= n {
				break
			}
			for i := 0; i+l <= n; i++ {
				s := k[starts[i]:starts[i+l]]
				if _, in := byKey[s]; in && !seen[s] {
					seen[s] = true
					subs[k] = append(subs[k], s)
					up[s] += len(byKey[k])
				}
			}
		}
	}
	generic = map[string]bool{}
	for _, k := range distinct {
		n := len(byKey[k]) - 1 + up[k]
		for _, s := range subs[k] {
			n += len(byKey[s])
		}
		if n > maxNamesakes {
			generic[k] = true
		}
	}
	pair := func(a, b int32) {
		if a > b {
			a, b = b, a
		}
		pairs = append(pairs, [2]int32{a, b})
	}
	for _, k := range distinct {
		if generic[k] {
			continue
		}
		g := byKey[k]
		for i := range g {
			for j := i + 1; j < len(g); j++ {
				pair(g[i], g[j])
			}
		}
		for _, s := range subs[k] {
			if generic[s] {
				continue
			}
			for _, a := range g {
				for _, b := range byKey[s] {
					pair(a, b)
				}
			}
		}
	}
	return pairs, generic
}

// slotToken is a signature's value in one slot, as one number: the value
// mixed with the slot. Two tokens of different slots may in principle
// share a number; that only merges their counts and posting lists, which
// adds candidates (each is checked) and leaves the order a single order
// over (number, slot), so no pair is lost.
func slotToken(slot int, v uint64) uint64 {
	return v ^ (uint64(slot+1) * 0x9E3779B97F4A7C15)
}

// similarPairs returns every pair (x < y) of the given signatures whose
// similarity is at least t, in order; a nil signature takes no part. It
// indexes each signature by its rarest 128 - s(t) + 1 slot values (see the
// comment at the top of this file), so it compares the pairs that share a
// rare value, not every pair.
func similarPairs(sigs []*signature, t float64) [][2]int32 {
	s := minSameSlots(t)
	if s > minhashSize {
		return nil
	}
	n := 0
	for _, sig := range sigs {
		if sig != nil {
			n++
		}
	}
	freq := make(map[uint64]int32, n*minhashSize)
	for _, sig := range sigs {
		if sig == nil {
			continue
		}
		for j, v := range sig {
			freq[slotToken(j, v)]++
		}
	}
	prefix := minhashSize - s + 1
	if s == 0 {
		prefix = minhashSize // every pair qualifies; a shared slot is not needed
	}
	index := map[uint64][]int32{}
	stamp := make([]int32, len(sigs))
	for i := range stamp {
		stamp[i] = -1
	}
	var out [][2]int32
	type ranked struct {
		freq int32
		slot int32
		tok  uint64
	}
	toks := make([]ranked, minhashSize)
	for y, sig := range sigs {
		if sig == nil {
			continue
		}
		for j, v := range sig {
			tok := slotToken(j, v)
			toks[j] = ranked{freq[tok], int32(j), tok}
		}
		// Rarest first; within a signature each slot is one token, so
		// (frequency, slot) orders every token the same way in every
		// signature.
		slices.SortFunc(toks, func(a, b ranked) int {
			if c := cmp.Compare(a.freq, b.freq); c != 0 {
				return c
			}
			return cmp.Compare(a.slot, b.slot)
		})
		if s == 0 {
			for x := range y {
				if sigs[x] != nil {
					out = append(out, [2]int32{int32(x), int32(y)})
				}
			}
			continue
		}
		for _, r := range toks[:prefix] {
			for _, x := range index[r.tok] {
				if stamp[x] == int32(y) {
					continue
				}
				stamp[x] = int32(y)
				if similarity(*sigs[x], *sig) >= t {
					out = append(out, [2]int32{x, int32(y)})
				}
			}
		}
		for _, r := range toks[:prefix] {
			index[r.tok] = append(index[r.tok], int32(y))
		}
	}
	return sortPairs(out)
}

// sortPairs sorts pairs and removes repeats.
func sortPairs(p [][2]int32) [][2]int32 {
	slices.SortFunc(p, func(a, b [2]int32) int {
		if c := cmp.Compare(a[0], b[0]); c != 0 {
			return c
		}
		return cmp.Compare(a[1], b[1])
	})
	return slices.Compact(p)
}
