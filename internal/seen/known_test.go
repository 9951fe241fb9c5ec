package seen

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/weft-crawler/weft/internal/partition"
)

// countingStore is a MemoryStore that counts its lookups.
type countingStore struct {
	*MemoryStore
	mu      sync.Mutex
	lookups int
}

func (c *countingStore) Has(p int, host string, k Key) (bool, error) {
	c.mu.Lock()
	c.lookups++
	c.mu.Unlock()
	return c.MemoryStore.Has(p, host, k)
}

func (c *countingStore) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lookups
}

// TestCacheAnswersRepeats: a URL linked again and again costs the store
// one lookup, not one per link: whether this Set recorded it (at once, or
// staged and settled) or a Set before it did; and the cache stays within
// its bound.
func TestCacheAnswersRepeats(t *testing.T) {
	cs := &countingStore{MemoryStore: NewMemoryStore(4)}
	s, err := New(Config{ExpectedURLs: 10_000, Partitions: 4}, cs)
	if err != nil {
		t.Fatal(err)
	}
	url := func(i int) (string, string) {
		h := fmt.Sprintf("h%d.test", i%7)
		return h, fmt.Sprintf("http://%s/page/%d", h, i)
	}
	// Half recorded at once, half staged and settled.
	var staged []Pending
	stage := func(p int, k Key) (bool, error) {
		cs.Add(p, k)
		staged = append(staged, Pending{p, k})
		return true, nil
	}
	for i := range 1000 {
		h, u := url(i)
		rec := cs.Add
		if i%2 == 1 {
			rec = stage
		}
		if isNew, err := s.Add(h, u, rec); err != nil || !isNew {
			t.Fatalf("%s: new %v, %v", u, isNew, err)
		}
	}
	s.Settle(staged)
	before := cs.count()
	for range 50 {
		for i := range 1000 {
			h, u := url(i)
			if isNew, _ := s.Add(h, u, cs.Add); isNew {
				t.Fatalf("%s new twice", u)
			}
		}
	}
	if n := cs.count() - before; n != 0 {
		t.Errorf("50 repeats of 1,000 URLs made %d store lookups, want 0", n)
	}
	if st := s.Stats(); st.CacheHits != 50_000 {
		t.Errorf("stats %+v: want 50,000 cache hits", st)
	}

	// A second Set over the same store (a restart): the first repeat asks
	// the store, the next ones do not.
	again, _ := New(Config{ExpectedURLs: 10_000, Partitions: 4}, cs)
	for i := range 1000 {
		h, u := url(i)
		again.Restore(partition.Of(h, 4), KeyOf(u))
	}
	for round := range 3 {
		before := cs.count()
		for i := range 1000 {
			h, u := url(i)
			if isNew, _ := again.Add(h, u, cs.Add); isNew {
				t.Fatalf("%s new after the restart", u)
			}
		}
		if n, want := cs.count()-before, map[bool]int{true: 1000, false: 0}[round == 0]; n != want {
			t.Errorf("after the restart, round %d: %d store lookups, want %d", round, n, want)
		}
	}
}

// TestCacheBoundAndExact runs random adds over a universe larger than a
// tiny cache, with a filter that says "maybe" half the time: every answer
// matches a model, and the cache never holds more than its bound.
func TestCacheBoundAndExact(t *testing.T) {
	cs := &countingStore{MemoryStore: NewMemoryStore(2)}
	const bound = 256
	s, err := New(Config{ExpectedURLs: 1, FalsePositiveRate: 0.5, Partitions: 2, CacheKeys: bound}, cs)
	if err != nil {
		t.Fatal(err)
	}
	model := map[string]bool{}
	r := rand.New(rand.NewPCG(3, 4))
	for range 50_000 {
		i := int(r.ExpFloat64() * 400) // a few URLs very often, many rarely
		h := fmt.Sprintf("h%d.test", i%3)
		u := fmt.Sprintf("http://%s/%d", h, i)
		isNew, err := s.Add(h, u, cs.Add)
		if err != nil {
			t.Fatal(err)
		}
		if isNew == model[u] {
			t.Fatalf("%s: new %v, seen before %v", u, isNew, model[u])
		}
		model[u] = true
		if n := s.known.len(); n > bound+knownShards {
			t.Fatalf("cache holds %d keys, bound %d", n, bound)
		}
	}
	st := s.Stats()
	if st.CacheHits == 0 || st.Maybes == 0 {
		t.Errorf("stats %+v: the cache answered nothing", st)
	}
	t.Logf("%d distinct URLs, %d maybes, %d cache hits, %d store lookups", len(model), st.Maybes, st.CacheHits, cs.count())
}

// TestNoCache: CacheKeys < 0 keeps no cache, every maybe asks the store.
func TestNoCache(t *testing.T) {
	cs := &countingStore{MemoryStore: NewMemoryStore(1)}
	s, _ := New(Config{CacheKeys: -1}, cs)
	s.Add("a.test", "http://a.test/", cs.Add)
	for range 10 {
		s.Add("a.test", "http://a.test/", cs.Add)
	}
	if n := cs.count(); n != 10 {
		t.Errorf("%d store lookups for 10 repeats without a cache, want 10", n)
	}
}

// TestKnownKeysKeepTheLeastDepth: the cache notes the depths a known key
// is met at and keeps the least, through a key's move from the older map
// to the newer; a key it does not hold notes nothing, and one met at no
// depth (or at none a byte holds) has none.
func TestKnownKeysKeepTheLeastDepth(t *testing.T) {
	k := newKnownKeys(knownShards * 4) // two keys a map in each shard
	a, b := KeyOf("http://a.test/x"), KeyOf("http://a.test/y")
	if k.met(a, 3) {
		t.Error("a key the cache does not hold was noted")
	}
	k.put(a)
	if d, ok := k.depth(a); ok {
		t.Errorf("a key met at no depth has depth %d", d)
	}
	for _, d := range []int{7, 4, 9} {
		if !k.met(a, d) {
			t.Fatalf("a known key not noted at depth %d", d)
		}
	}
	// A depth a byte cannot hold is not noted: kept as 255, it would read
	// back as 254, shallower than the way it was met.
	c := KeyOf("http://a.test/deep")
	k.put(c)
	if !k.met(c, 300) || !k.met(c, 254) {
		t.Error("a known key met at a depth of 254 or more reported unknown")
	}
	if d, ok := k.depth(c); ok {
		t.Errorf("met only at depths of 254 and more: depth %d", d)
	}
	if d, ok := k.depth(a); !ok || d != 4 {
		t.Errorf("depth %d (%v), want the least met, 4", d, ok)
	}
	// Fill a's shard until a is in the older map, then look at it again.
	sh := k.shard(a)
	for i := 0; len(sh.old) == 0 || sh.cur[a] != 0; i++ {
		if key := KeyOf(fmt.Sprintf("http://a.test/%d", i)); k.shard(key) == sh && key != a {
			k.put(key)
		}
	}
	if _, ok := sh.old[a]; !ok {
		t.Fatal("the key left the cache; the test wants it in the older map")
	}
	if d, ok := k.depth(a); !ok || d != 4 {
		t.Errorf("after a move, depth %d (%v), want 4", d, ok)
	}
	if k.met(b, 1) || func() bool { _, ok := k.depth(b); return ok }() {
		t.Error("a key never put has a depth")
	}
	var nilKeys *knownKeys
	if nilKeys.met(a, 1) {
		t.Error("a nil cache noted a depth")
	}
	if _, ok := nilKeys.depth(a); ok {
		t.Error("a nil cache has a depth")
	}
}
