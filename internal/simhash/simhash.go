// Package simhash computes 64-bit SimHash fingerprints (Charikar; Manku,
// Jain and Das Sarma for web pages) of a page's words, and the Hamming
// distance between two of them: near-duplicate pages have fingerprints a
// few bits apart, unrelated ones about 32.
//
// The features are the page's k-word shingles, each hashed from its words'
// hashes and weighted equally. It is written here rather than taken from a
// library: the one Go package for it (mfonda/simhash, 2015, no go.mod)
// hashes single words, which put unrelated pages at distance 0 in our
// measurements (see DEPENDENCIES.md), and the whole is a few lines.
package simhash

import "math/bits"

// FNV-1a 64's constants, to fold a shingle's word hashes.
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

// The measured defaults. TestNearDuplicatePrecisionRecall (600 pages: 120
// articles of 150 to 1,500 words, each with variants that change the
// footer, add a timestamp, insert an ad block or change the navigation):
// with 3-word shingles, precision and recall both reach 0.95 for thresholds
// 9 to 16 (recall 0.96 at 9, 1.00 at 12). Single words give no threshold
// with both (precision 0.25 at recall 0.84); 2-word shingles 8 to 14, 4 and
// 5 words 9 or 10 to 16. Four exact 16-bit bands find only 77 % of the
// near-duplicate pairs at 3 words: an index must probe more than them.
//
// Within that range the threshold is set by the size of the index, not by
// the corpus: a page is judged against every page stored before it, and
// the fingerprints of unrelated pages differ like random ones (the
// synthetic web's do: TestArticles in package synthweb), so a lookup in an
// index of n pages finds a false match with probability n·F(t), F(t) the
// chance that two random 64-bit values are within t bits:
//
//	t   F(t)      false matches per lookup at 1M pages   at 10M
//	9   1.8e-9    0.2 %                                  1.8 %
//	10  1.0e-8    1 %                                    10 %
//	12  2.3e-7    23 %                                   (all)
//
// 12 would flag a quarter of the pages of a million-page crawl. 9 keeps
// false matches rare at that size and is the lowest threshold that meets
// 0.95 recall.
const (
	DefaultShingle   = 3
	DefaultThreshold = 9
)

// Fingerprint returns the SimHash of the k-word shingles of words (word
// hashes, as extract.HTML gives them in Result.Words; the words themselves if k <= 1, all
// of them as one shingle if there are fewer than k). A shingle's feature is
// its k word hashes folded FNV-style and then mixed, so every bit depends on
// every word. It returns 0 for no words.
func Fingerprint(words []uint64, k int) uint64 {
	if len(words) == 0 {
		return 0
	}
	k = max(1, min(k, len(words)))
	// A bit is set when more than half of the shingles have it: the sum
	// of their +1 and -1 votes is positive.
	var ones [64]int32
	n := 0
	for start := 0; start+k <= len(words); start += maxLanes {
		end := min(start+maxLanes, len(words)-k+1)
		count(&ones, words[start:end+k-1], k)
		n += end - start
	}
	var fp uint64
	for b, c := range ones {
		if 2*int(c) > n {
			fp |= 1 << b
		}
	}
	return fp
}

// maxLanes is the most shingles count can add to byte-wide counters
// before they could overflow.
const maxLanes = 255

// count adds to ones[b] the number of k-word shingles of words (at most
// maxLanes of them) whose hash has bit b set.
//
// Each bit's vote is counted SWAR-style: a0 to a7 hold eight byte-wide
// counters each, lane i of aj counting bit 8i+j, so a shingle costs eight
// adds rather than 64. They are eight variables, not an array, so that
// the compiler keeps them in registers: an array lives in memory, and
// each add then waits on the one before it through a store.
func count(ones *[64]int32, words []uint64, k int) {
	const lanes = 0x0101010101010101
	var a0, a1, a2, a3, a4, a5, a6, a7 uint64
	for i := 0; i+k <= len(words); i++ {
		x := uint64(fnvOffset)
		if k == 3 {
			w := words[i : i+3 : i+3]
			x = ((((x^w[0])*fnvPrime)^w[1])*fnvPrime ^ w[2]) * fnvPrime
		} else {
			for _, w := range words[i : i+k] {
				x = (x ^ w) * fnvPrime
			}
		}
		x = mix(x)
		a0 += x & lanes
		a1 += x >> 1 & lanes
		a2 += x >> 2 & lanes
		a3 += x >> 3 & lanes
		a4 += x >> 4 & lanes
		a5 += x >> 5 & lanes
		a6 += x >> 6 & lanes
		a7 += x >> 7 & lanes
	}
	for j, a := range [8]uint64{a0, a1, a2, a3, a4, a5, a6, a7} {
		for i := range 8 {
			ones[8*i+j] += int32(a >> (8 * i) & 0xff)
		}
	}
}

// mix is SplitMix64's finaliser: FNV's multiply leaves the low bits of a
// fold of whole 64-bit words poorly mixed, and SimHash uses every bit.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

// Distance is the number of bits in which a and b differ.
func Distance(a, b uint64) int { return bits.OnesCount64(a ^ b) }

// Bands splits a fingerprint into four 16-bit bands, high first: two
// fingerprints within distance 3 share at least one band exactly, so an
// index of the bands finds them with four bucket reads. (Near-duplicates
// at the default threshold are often further apart: see above.)
func Bands(fp uint64) [4]uint16 {
	return [4]uint16{uint16(fp >> 48), uint16(fp >> 32), uint16(fp >> 16), uint16(fp)}
}
