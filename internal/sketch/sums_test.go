package sketch

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

// TestSums: sums of weighted events are exact far from full, never below
// the truth when full, saturate rather than wrap, and Add returns the
// estimate before and after.
func TestSums(t *testing.T) {
	s := NewSums(64 << 10)
	if s.Bytes() != 64<<10 {
		t.Fatalf("%d bytes, want 64 KiB", s.Bytes())
	}
	for i := range 100 {
		for j := range i {
			before, after := s.Add(key(strconv.Itoa(i)), uint32(j+1))
			if after != before+uint32(j+1) {
				t.Fatalf("key %d: add %d took %d to %d", i, j+1, before, after)
			}
		}
	}
	for i := range 100 {
		if got, want := s.Sum(key(strconv.Itoa(i))), uint32(i*(i+1)/2); got != want {
			t.Errorf("key %d: %d, want exact %d", i, got, want)
		}
	}
	full := NewSums(4 << 10) // 256 counters a row
	r := rand.New(rand.NewPCG(3, 4))
	truth := make([]uint64, 2000)
	for i := range truth {
		for range 1 + r.IntN(4) {
			n := uint32(1 + r.IntN(1000))
			truth[i] += uint64(n)
			full.Add(key(strconv.Itoa(i)), n)
		}
	}
	for i, n := range truth {
		if got := full.Sum(key(strconv.Itoa(i))); uint64(got) < n {
			t.Fatalf("key %d: %d, below its true sum %d", i, got, n)
		}
	}
	k := key("big")
	s.Add(k, math.MaxUint32-5)
	if _, after := s.Add(k, 10); after != math.MaxUint32 {
		t.Errorf("a sum past 2^32 is %d, want it saturated", after)
	}
}
