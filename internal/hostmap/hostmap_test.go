package hostmap

import (
	"fmt"
	"slices"
	"testing"
)

// mapBacking is a Backing over a map, recording what is saved.
type mapBacking struct {
	saved   map[string]int
	dropped []string
}

func (b *mapBacking) Load(host string) int { return b.saved[host] }
func (b *mapBacking) Save(host string, v int) {
	b.saved[host] = v
	b.dropped = append(b.dropped, host)
}

func TestBoundEvictsLeastRecentlyUsed(t *testing.T) {
	b := &mapBacking{saved: map[string]int{}}
	h := NewBounded[int](1, 3, b)
	for _, host := range []string{"a", "b", "c"} {
		h.Update(host, func(n int) int { return n + 1 })
	}
	h.Get("a") // a is now the most recent: b is the least
	h.Update("d", func(n int) int { return n + 10 })
	if n := h.Len(); n != 3 {
		t.Fatalf("%d hosts in memory, bound 3", n)
	}
	if !slices.Equal(b.dropped, []string{"b"}) {
		t.Fatalf("evicted %v, want [b] (least recently used)", b.dropped)
	}
	if _, ok := h.Peek("b"); ok {
		t.Fatal("b still in memory")
	}
	// b is read back with its value, and evicts c.
	if v := h.Update("b", func(n int) int { return n + 1 }); v != 2 {
		t.Fatalf("b read back as %d, want 2 (1 saved, plus 1)", v)
	}
	if !slices.Equal(b.dropped, []string{"b", "c"}) {
		t.Fatalf("evicted %v, want [b c]", b.dropped)
	}
	h.Flush()
	if b.saved["a"] != 1 || b.saved["b"] != 2 || b.saved["d"] != 10 || b.saved["c"] != 1 {
		t.Fatalf("after flush the store holds %v", b.saved)
	}
}

// inUse is a value pinned while its flag says so.
type inUse struct {
	n   int
	use *bool
}

func (v inUse) Pinned() bool { return *v.use }

func TestKeepsPinnedHosts(t *testing.T) {
	use := map[string]*bool{}
	h := NewBounded[inUse](1, 2, nil)
	for i := range 10 {
		host := fmt.Sprint("h", i)
		flag := i < 2
		use[host] = &flag
		h.Update(host, func(inUse) inUse { return inUse{n: i, use: use[host]} })
	}
	// h0 and h1 stay over the bound while pinned; of the rest only the
	// most recent is kept.
	for _, host := range []string{"h0", "h1", "h9"} {
		if _, ok := h.Peek(host); !ok {
			t.Errorf("%s evicted", host)
		}
	}
	if n := h.Len(); n != 3 {
		t.Errorf("%d hosts in memory, want 3 (two pinned, the newest)", n)
	}
	*use["h0"], *use["h1"] = false, false
	f := false
	h.Update("h10", func(inUse) inUse { return inUse{n: 10, use: &f} })
	if n := h.Len(); n != 2 {
		t.Errorf("%d hosts in memory once none is pinned, want the bound, 2", n)
	}
}

func TestUnboundedWithoutBacking(t *testing.T) {
	h := New[int](4)
	for i := range 100 {
		h.Update(fmt.Sprint("h", i), func(int) int { return i })
	}
	if n := h.Len(); n != 100 {
		t.Fatalf("%d hosts, want 100", n)
	}
	if _, ok := h.Get("absent"); ok {
		t.Fatal("Get of an absent host says it has a value")
	}
}
