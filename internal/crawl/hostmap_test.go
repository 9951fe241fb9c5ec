package crawl

import (
	"fmt"
	"slices"
	"testing"
)

func TestHostMapBoundEvictsLeastRecentlyUsed(t *testing.T) {
	saved := map[string]int{}
	var dropped []string
	h := newBoundedHostMap[int](1, 3,
		func(host string) int { return saved[host] },
		func(host string, v int) { saved[host] = v; dropped = append(dropped, host) },
		nil)
	for _, host := range []string{"a", "b", "c"} {
		h.update(host, func(n int) int { return n + 1 })
	}
	h.get("a") // a is now the most recent: b is the least
	h.update("d", func(n int) int { return n + 10 })
	if n := h.len(); n != 3 {
		t.Fatalf("%d hosts in memory, bound 3", n)
	}
	if !slices.Equal(dropped, []string{"b"}) {
		t.Fatalf("evicted %v, want [b] (least recently used)", dropped)
	}
	if _, ok := h.peek("b"); ok {
		t.Fatal("b still in memory")
	}
	// b is read back with its value, and evicts c.
	if v := h.update("b", func(n int) int { return n + 1 }); v != 2 {
		t.Fatalf("b read back as %d, want 2 (1 saved, plus 1)", v)
	}
	if !slices.Equal(dropped, []string{"b", "c"}) {
		t.Fatalf("evicted %v, want [b c]", dropped)
	}
	h.flush()
	if saved["a"] != 1 || saved["b"] != 2 || saved["d"] != 10 || saved["c"] != 1 {
		t.Fatalf("after flush the store holds %v", saved)
	}
}

func TestHostMapKeepsHostsInUse(t *testing.T) {
	inUse := map[string]bool{"h0": true, "h1": true}
	h := newBoundedHostMap[int](1, 2, nil, nil, func(host string, _ int) bool { return inUse[host] })
	for i := range 10 {
		h.update(fmt.Sprint("h", i), func(int) int { return i })
	}
	// h0 and h1 stay over the bound while in use; of the rest only the
	// most recent is kept.
	for _, host := range []string{"h0", "h1", "h9"} {
		if _, ok := h.peek(host); !ok {
			t.Errorf("%s evicted", host)
		}
	}
	if n := h.len(); n != 3 {
		t.Errorf("%d hosts in memory, want 3 (two in use, the newest)", n)
	}
	inUse["h0"], inUse["h1"] = false, false
	h.update("h10", func(int) int { return 10 })
	if n := h.len(); n != 2 {
		t.Errorf("%d hosts in memory once none is in use, want the bound, 2", n)
	}
}

func TestHostMapUnboundedWithoutLoader(t *testing.T) {
	h := newHostMap[int](4)
	for i := range 100 {
		h.update(fmt.Sprint("h", i), func(int) int { return i })
	}
	if n := h.len(); n != 100 {
		t.Fatalf("%d hosts, want 100", n)
	}
	if _, ok := h.get("absent"); ok {
		t.Fatal("get of an absent host says it has a value")
	}
}
