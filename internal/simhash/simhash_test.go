package simhash

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// A shingle's feature is its word hashes folded with FNV-1a's step and
// mixed; the fingerprint is each bit's majority over the features.
func TestFingerprint(t *testing.T) {
	words := hashWords(strings.Fields("the quick brown fox jumps over the lazy dog"))
	var v [64]int
	for i := 0; i+3 <= len(words); i++ {
		x := uint64(fnvOffset)
		for _, w := range words[i : i+3] {
			x = (x ^ w) * fnvPrime
		}
		x = mix(x)
		for b := range 64 {
			if x&(1<<b) != 0 {
				v[b]++
			} else {
				v[b]--
			}
		}
	}
	var want uint64
	for b := range 64 {
		if v[b] > 0 {
			want |= 1 << b
		}
	}
	if got := Fingerprint(words, 3); got != want {
		t.Fatalf("Fingerprint = %016x, want %016x", got, want)
	}
	if Fingerprint(nil, 3) != 0 || Fingerprint(words[:2], 3) != Fingerprint(words[:2], 2) {
		t.Error("short inputs")
	}
	// Order matters within a shingle.
	if Fingerprint(hashWords([]string{"a", "b", "c"}), 3) == Fingerprint(hashWords([]string{"c", "b", "a"}), 3) {
		t.Error("a shingle's words in another order give the same fingerprint")
	}
}

// hashWords hashes words as extract.WordHash does (FNV-1a 64).
func hashWords(ws []string) []uint64 {
	out := make([]uint64, len(ws))
	for i, w := range ws {
		h := fnv.New64a()
		h.Write([]byte(w))
		out[i] = h.Sum64()
	}
	return out
}

func TestDistanceAndBands(t *testing.T) {
	if Distance(0, ^uint64(0)) != 64 || Distance(0xf0, 0x0f) != 8 || Distance(7, 7) != 0 {
		t.Error("Distance")
	}
	if b := Bands(0x1111222233334444); b != [4]uint16{0x1111, 0x2222, 0x3333, 0x4444} {
		t.Errorf("Bands = %x", b)
	}
}

// corpus generates articles and their near-duplicate variants, the kinds
// the issue names: the same article with a changed footer, a timestamp, an
// ad block, or other navigation. Each family is one article; articles of
// different families share the vocabulary and the site's boilerplate
// (navigation and footer), as pages of one site do.
type corpus struct {
	vocab []string
	nav   []string
	foot  []string
}

func newCorpus() *corpus {
	r := rand.New(rand.NewPCG(1, 2))
	c := &corpus{}
	for range 5000 {
		n := 2 + r.IntN(8)
		b := make([]byte, n)
		for i := range b {
			b[i] = "etaoinshrdlcumwfgypbvkjxqz"[min(r.IntN(26), r.IntN(26))]
		}
		c.vocab = append(c.vocab, string(b))
	}
	c.nav = strings.Fields("home news sport culture business opinion science travel weather about contact subscribe")
	c.foot = strings.Fields("copyright 2026 example media all rights reserved privacy policy terms of use cookie settings")
	return c
}

func (c *corpus) words(r *rand.Rand, n int) []string {
	z := rand.NewZipf(r, 1.1, 2, uint64(len(c.vocab)-1))
	out := make([]string, n)
	for i := range out {
		out[i] = c.vocab[z.Uint64()]
	}
	return out
}

// page assembles navigation, an article body and a footer.
func (c *corpus) page(nav, body, foot []string) []string {
	return append(append(append([]string{}, nav...), body...), foot...)
}

// family returns an article's page and its variants.
func (c *corpus) family(seed uint64, bodyWords int) [][]string {
	r := rand.New(rand.NewPCG(seed, 7))
	body := c.words(r, bodyWords)
	base := c.page(c.nav, body, c.foot)
	footer := c.page(c.nav, body, append(append([]string{}, c.foot...), c.words(r, 12)...))
	stamp := c.page(c.nav, append([]string{"updated", "30", "november", "2026", "11", "42"}, body...), c.foot)
	ad := append(append(append([]string{}, body[:len(body)/2]...), c.words(r, 25)...), body[len(body)/2:]...)
	ads := c.page(c.nav, ad, c.foot)
	nav := c.page(append(append([]string{}, c.nav[:8]...), c.words(r, 8)...), body, c.foot)
	return [][]string{base, footer, stamp, ads, nav}
}

// TestNearDuplicatePrecisionRecall measures, over families of variants and
// distinct articles, the precision and recall of "distance <= threshold"
// for shingle sizes 1 to 5, and the share of near-duplicate pairs that four
// 16-bit bands would find (at least one band equal). It fails unless the
// chosen setting (DefaultShingle, DefaultThreshold) reaches 0.95 on both.
func TestNearDuplicatePrecisionRecall(t *testing.T) {
	c := newCorpus()
	type doc struct {
		family int
		words  []uint64
	}
	var docs []doc
	r := rand.New(rand.NewPCG(3, 4))
	for f := range 120 {
		// Articles of 150 to 1,500 words: short news to long reads.
		for _, w := range c.family(uint64(f), 150+r.IntN(1350)) {
			docs = append(docs, doc{f, hashWords(w)})
		}
	}
	for k := 1; k <= 5; k++ {
		fps := make([]uint64, len(docs))
		for i, d := range docs {
			fps[i] = Fingerprint(d.words, k)
		}
		var line strings.Builder
		fmt.Fprintf(&line, "k=%d:", k)
		var okAt []int
		for th := 0; th <= 16; th++ {
			tp, fp, fn := 0, 0, 0
			for i := range docs {
				for j := i + 1; j < len(docs); j++ {
					near := Distance(fps[i], fps[j]) <= th
					same := docs[i].family == docs[j].family
					switch {
					case near && same:
						tp++
					case near:
						fp++
					case same:
						fn++
					}
				}
			}
			p, rc := 1.0, float64(tp)/float64(tp+fn)
			if tp+fp > 0 {
				p = float64(tp) / float64(tp+fp)
			}
			fmt.Fprintf(&line, " %d:%.2f/%.2f", th, p, rc)
			if p >= 0.95 && rc >= 0.95 {
				okAt = append(okAt, th)
			}
		}
		banded, pairs := 0, 0
		for i := range docs {
			for j := i + 1; j < len(docs); j++ {
				if docs[i].family != docs[j].family {
					continue
				}
				pairs++
				bi, bj := Bands(fps[i]), Bands(fps[j])
				for b := range 4 {
					if bi[b] == bj[b] {
						banded++
						break
					}
				}
			}
		}
		t.Logf("%s (threshold:precision/recall); thresholds with both >= 0.95: %v; near-duplicate pairs sharing a band: %.2f", line.String(), okAt, float64(banded)/float64(pairs))
		if k == DefaultShingle && !slices.Contains(okAt, DefaultThreshold) {
			t.Errorf("the defaults (%d-word shingles, threshold %d) miss 0.95 precision or recall", DefaultShingle, DefaultThreshold)
		}
	}
}

func BenchmarkFingerprint(b *testing.B) {
	c := newCorpus()
	words := hashWords(c.family(1, 1000)[0]) // a 1,024-word page
	b.ReportAllocs()
	for b.Loop() {
		Fingerprint(words, DefaultShingle)
	}
}

// naiveFingerprint is the textbook SimHash: a +1 or -1 vote per bit per
// shingle. Fingerprint must agree with it exactly.
func naiveFingerprint(words []uint64, k int) uint64 {
	if len(words) == 0 {
		return 0
	}
	k = max(1, min(k, len(words)))
	var v [64]int32
	for i := 0; i+k <= len(words); i++ {
		x := uint64(fnvOffset)
		for _, w := range words[i : i+k] {
			x = (x ^ w) * fnvPrime
		}
		x = mix(x)
		for b := range 64 {
			v[b] += int32(x>>b&1)*2 - 1
		}
	}
	var fp uint64
	for b := range 64 {
		if v[b] > 0 {
			fp |= 1 << b
		}
	}
	return fp
}

func TestFingerprintIsSimHash(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{0, 1, 2, 3, 4, 254, 255, 256, 257, 511, 512, 1000, 5000} {
		for k := 1; k <= 4; k++ {
			words := make([]uint64, n)
			for i := range words {
				words[i] = r.Uint64() % 50 // few distinct words: many repeated shingles, ties
			}
			if got, want := Fingerprint(words, k), naiveFingerprint(words, k); got != want {
				t.Errorf("%d words, k=%d: Fingerprint %016x, textbook SimHash %016x", n, k, got, want)
			}
		}
	}
}
