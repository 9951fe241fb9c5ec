package partition

import (
	"fmt"
	"testing"
)

// TestOfGolden pins Of's values for a fixed list of hosts (FNV-1a 64,
// modulo n, checked against an independent implementation): a change
// here would reshuffle every existing crawl's partitions, so it must be
// deliberate.
func TestOfGolden(t *testing.T) {
	for _, c := range []struct {
		host           string
		p8, p64, p1024 int
	}{
		{"example.com", 6, 6, 198},
		{"www.example.org", 0, 24, 856},
		{"a.test", 6, 14, 846},
		{"127.0.0.1:8080", 4, 12, 972},
		{"[::1]:443", 7, 55, 311},
		{"xn--bcher-kva.example", 4, 20, 212},
		{"h00042.example.com", 0, 8, 456},
	} {
		for _, w := range []struct{ n, want int }{{8, c.p8}, {64, c.p64}, {1024, c.p1024}} {
			if got := Of(c.host, w.n); got != w.want {
				t.Errorf("Of(%q, %d) = %d, want %d", c.host, w.n, got, w.want)
			}
		}
	}
}

func TestOfStableAndSpread(t *testing.T) {
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
