package simhash

import (
	"math/rand/v2"
	"testing"
)

func TestIndexFindsEverythingWithinTheGuarantee(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	var ix Index
	stored := make([]uint64, 20000)
	for i := range stored {
		stored[i] = r.Uint64()
		ix.Add(stored[i])
	}
	for trial := range 3000 {
		i := r.IntN(len(stored))
		d := trial % (Guaranteed + 1)
		q := stored[i]
		// d distinct bits.
		for flipped := 0; flipped < d; {
			b := r.IntN(64)
			if (q^stored[i])&(1<<b) == 0 {
				q ^= 1 << b
				flipped++
			}
		}
		m, ok := ix.Near(q, Guaranteed)
		if !ok || m.Dist > d || Distance(q, m.FP) != m.Dist {
			t.Fatalf("a fingerprint %d bits from stored #%d: Near = %+v, %v", d, i, m, ok)
		}
	}
	// Random queries are far from everything.
	for range 100 {
		if m, ok := ix.Near(r.Uint64(), 8); ok {
			t.Fatalf("a random query matched #%d at distance %d", m.ID, m.Dist)
		}
	}
	// Three bits in every band: 12 apart, beyond the probes.
	q := stored[0] ^ 0x0007_0007_0007_0007
	if m, ok := ix.Near(q, 12); ok && m.ID == 0 {
		t.Error("found a fingerprint beyond the probes' reach: the guarantee is understated")
	}
}

func TestIndexNearest(t *testing.T) {
	var ix Index
	a := ix.Add(0)
	b := ix.Add(0b111)
	ix.Add(0b111) // a duplicate: the earlier wins a tie
	if m, ok := ix.Near(0b011, 5); !ok || m != (Match{ID: b, FP: 0b111, Dist: 1}) {
		t.Errorf("Near = %+v, %v; want #%d at 1", m, ok, b)
	}
	if m, ok := ix.Near(0b1, 5); !ok || m != (Match{ID: a, FP: 0, Dist: 1}) {
		t.Errorf("Near = %+v, %v; want #%d at 1", m, ok, a)
	}
	if _, ok := ix.Near(^uint64(0), 5); ok {
		t.Error("matched a fingerprint 61 bits away")
	}
	if ix.Len() != 3 {
		t.Errorf("Len = %d", ix.Len())
	}
}

// BenchmarkNear looks up fingerprints among a million stored ones, half of
// them a few bits from a stored one.
func BenchmarkNear(b *testing.B) {
	r := rand.New(rand.NewPCG(7, 8))
	var ix Index
	stored := make([]uint64, 1_000_000)
	for i := range stored {
		stored[i] = r.Uint64()
		ix.Add(stored[i])
	}
	queries := make([]uint64, 1024)
	for i := range queries {
		if i%2 == 0 {
			queries[i] = stored[r.IntN(len(stored))] ^ (1 << r.IntN(64)) ^ (1 << r.IntN(64))
		} else {
			queries[i] = r.Uint64()
		}
	}
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		ix.Near(queries[i%len(queries)], DefaultThreshold)
	}
}
