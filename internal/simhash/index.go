package simhash

import (
	"cmp"
	"math/bits"
	"slices"
)

// probeMasks are the 16-bit masks of at most two bits: XORed with a band's
// value, the buckets a query probes in that band (1 + 16 + 120).
var probeMasks = func() []uint16 {
	var m []uint16
	for v := 0; v < 1<<16; v++ {
		if bits.OnesCount16(uint16(v)) <= 2 {
			m = append(m, uint16(v))
		}
	}
	return m
}()

// Guaranteed is the largest distance at which Index.Near is sure to find a
// stored fingerprint: one at distance 11 or less differs in at most two bits
// of one of the four bands, and that band's probes reach it. Further apart
// (12 bits with exactly three in every band) it may be missed.
const Guaranteed = 11

// Index holds fingerprints in memory and finds the nearest one to a query.
//
// Four exact 16-bit bands (the classic index, a bucket read per band) find
// a stored fingerprint only within distance 3 for sure, and found 77 % of
// the near-duplicate pairs within 12 bits (see
// TestNearDuplicatePrecisionRecall). So each band is probed at Hamming
// radius 2 instead: 137 buckets per band, 548 per query, each holding on
// average n/65,536 fingerprints, which is why the buckets are in memory
// rather than in the store. A bucket holds its fingerprints' values beside
// their ids, so a probe reads one run of memory: a stored fingerprint costs
// 56 bytes (its value, and its value and id in four buckets), the tables
// 12 MiB.
//
// An Index is not safe for concurrent use.
type Index struct {
	n       int
	buckets [4][1 << 16]bucket
}

type bucket struct {
	fps []uint64
	ids []uint32
}

// Len returns the number of fingerprints added.
func (ix *Index) Len() int { return ix.n }

// Add stores fp and returns its id: the ids are 0, 1, 2, ... in order.
func (ix *Index) Add(fp uint64) uint32 {
	id := uint32(ix.n)
	ix.n++
	for b, v := range Bands(fp) {
		bk := &ix.buckets[b][v]
		bk.fps = append(bk.fps, fp)
		bk.ids = append(bk.ids, id)
	}
	return id
}

// Match is a stored fingerprint found near a query.
type Match struct {
	ID   uint32 // as Add returned it
	FP   uint64 // the stored fingerprint
	Dist int    // its distance to the query
}

// Near returns the stored fingerprint nearest to fp within maxDist (found
// for sure up to Guaranteed), and false if there is none. Ties go to the
// earliest added.
func (ix *Index) Near(fp uint64, maxDist int) (Match, bool) {
	best := Match{Dist: maxDist + 1}
	ix.probe(fp, maxDist, func(m Match) {
		if m.Dist < best.Dist || m.Dist == best.Dist && m.ID < best.ID {
			best = m
		}
	})
	return best, best.Dist <= maxDist
}

// Within appends to dst every stored fingerprint within maxDist of fp
// (found for sure up to Guaranteed), each once, nearest first (ties:
// earliest added), and returns it.
func (ix *Index) Within(dst []Match, fp uint64, maxDist int) []Match {
	start := len(dst)
	ix.probe(fp, maxDist, func(m Match) {
		for _, o := range dst[start:] {
			if o.ID == m.ID {
				return // found through another band
			}
		}
		dst = append(dst, m)
	})
	slices.SortFunc(dst[start:], func(a, b Match) int { return cmp.Or(cmp.Compare(a.Dist, b.Dist), cmp.Compare(a.ID, b.ID)) })
	return dst
}

// probe calls fn with each stored fingerprint within maxDist of fp that
// its bands' probes reach, once per band that reaches it.
func (ix *Index) probe(fp uint64, maxDist int, fn func(Match)) {
	for b, v := range Bands(fp) {
		tab := &ix.buckets[b]
		for _, m := range probeMasks {
			bk := &tab[v^m]
			for i, c := range bk.fps {
				if d := Distance(fp, c); d <= maxDist {
					fn(Match{ID: bk.ids[i], FP: c, Dist: d})
				}
			}
		}
	}
}
