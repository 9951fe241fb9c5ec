package seen

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
)

func TestAddIsNewExactlyOnce(t *testing.T) {
	mem := NewMemoryStore(4)
	s, err := New(Config{ExpectedURLs: 10000, Partitions: 4}, mem)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	newCount := map[string]int{}
	for range 8 {
		wg.Go(func() {
			for i := range 2000 {
				u := fmt.Sprintf("http://h%d.test/p/%d", i%50, i)
				isNew, err := s.Add(fmt.Sprintf("h%d.test", i%50), u, mem.Add)
				if err != nil {
					t.Error(err)
					return
				}
				if isNew {
					mu.Lock()
					newCount[u]++
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	if len(newCount) != 2000 {
		t.Fatalf("%d URLs found new, want 2000", len(newCount))
	}
	for u, n := range newCount {
		if n != 1 {
			t.Fatalf("%s found new %d times", u, n)
		}
	}
	if st, fill := s.Stats(), s.FillRatio(); st.Added != 2000 || fill <= 0 || fill >= 1 {
		t.Fatalf("stats %+v, fill ratio %v", st, fill)
	}
}

// A filter far too small for its load says "maybe" to most new URLs; the
// exact store must still let every one of them through, and the false
// positives must be counted.
func TestFalsePositivesAreConfirmedNotDropped(t *testing.T) {
	mem := NewMemoryStore(1)
	s, err := New(Config{ExpectedURLs: 1, FalsePositiveRate: 0.5}, mem)
	if err != nil {
		t.Fatal(err)
	}
	const n = 20000
	for i := range n {
		isNew, err := s.Add("a.test", fmt.Sprintf("http://a.test/%d", i), mem.Add)
		if err != nil {
			t.Fatal(err)
		}
		if !isNew {
			t.Fatalf("URL %d dropped as seen: a false positive was trusted", i)
		}
	}
	st := s.Stats()
	if st.FalsePositives == 0 || st.FalsePositives != st.Maybes {
		t.Fatalf("stats %+v: want false positives counted and equal to maybes (no URL was repeated)", st)
	}
	for i := range 100 {
		if isNew, _ := s.Add("a.test", fmt.Sprintf("http://a.test/%d", i), mem.Add); isNew {
			t.Fatalf("URL %d new twice", i)
		}
	}
	if st2 := s.Stats(); st2.Maybes != st.Maybes+100 || st2.FalsePositives != st.FalsePositives {
		t.Fatalf("repeats: %+v then %+v", st, st2)
	}
}

type failingStore struct{}

func (failingStore) Has(int, string, Key) (bool, error) { return false, errors.New("disk on fire") }

func TestStoreErrorsNameTheURL(t *testing.T) {
	s, _ := New(Config{}, failingStore{})
	_, err := s.Add("a.test", "http://a.test/x", func(int, Key) (bool, error) { return false, errors.New("disk on fire") })
	if err == nil || !containsAll(err.Error(), "http://a.test/x", "disk on fire") {
		t.Fatalf("error %v should name the URL and the cause", err)
	}
}

func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

func TestValidate(t *testing.T) {
	if _, err := New(Config{FalsePositiveRate: 1.5}, nil); err == nil {
		t.Error("rate 1.5 accepted")
	}
	if _, err := New(Config{Partitions: -2}, nil); err == nil {
		t.Error("negative partitions accepted")
	}
}

func BenchmarkAddNew(b *testing.B) {
	mem := NewMemoryStore(16)
	s, _ := New(Config{ExpectedURLs: uint(b.N) + 1000, Partitions: 16}, mem)
	urls := make([]string, 4096)
	for i := range urls {
		urls[i] = fmt.Sprintf("http://h%d.example.test/some/path/page-%d.html?q=%d", i%97, i, i)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s.Add("h.test", urls[i%len(urls)]+fmt.Sprint(i), mem.Add)
	}
}

func BenchmarkAddSeen(b *testing.B) {
	mem := NewMemoryStore(16)
	s, _ := New(Config{ExpectedURLs: 100000, Partitions: 16}, mem)
	urls := make([]string, 4096)
	for i := range urls {
		urls[i] = fmt.Sprintf("http://h%d.example.test/some/path/page-%d.html?q=%d", i%97, i, i)
		s.Add("h.test", urls[i], mem.Add)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s.Add("h.test", urls[i%len(urls)], mem.Add)
	}
}

// All URLs on one host land in one partition, however many partitions the
// filter was sized for: the partition's filter must grow new generations
// instead of filling up, keeping the false-positive rate at its target.
func TestSkewedHostKeepsTargetRate(t *testing.T) {
	mem := NewMemoryStore(64)
	s, err := New(Config{ExpectedURLs: 10000, Partitions: 64, FalsePositiveRate: 0.01}, mem)
	if err != nil {
		t.Fatal(err)
	}
	const n = 100000
	for i := range n {
		if isNew, _ := s.Add("big.test", fmt.Sprintf("http://big.test/p/%d", i), mem.Add); !isNew {
			t.Fatalf("URL %d not new", i)
		}
	}
	st := s.Stats()
	rate := float64(st.FalsePositives) / n
	t.Logf("%d URLs on one host: %d false positives (%.4f), %d generations, %d filter bytes", n, st.FalsePositives, rate, st.Generations, st.FilterBytes)
	if rate > 0.01 {
		t.Errorf("false-positive rate %.4f over the 1%% target", rate)
	}
	if st.Generations <= 64 {
		t.Errorf("%d generations: the hot partition never grew", st.Generations)
	}
}

func TestRestoreRebuildsTheFilter(t *testing.T) {
	mem := NewMemoryStore(8)
	first, _ := New(Config{ExpectedURLs: 1000, Partitions: 8}, mem)
	urls := map[string]string{}
	for i := range 500 {
		host := fmt.Sprintf("h%d.test", i%20)
		u := fmt.Sprintf("http://%s/%d", host, i)
		urls[u] = host
		first.Add(host, u, mem.Add)
	}
	// A restart: a new Set over the same store, filters rebuilt from it.
	second, _ := New(Config{ExpectedURLs: 1000, Partitions: 8}, mem)
	for p := range mem.parts {
		for k := range mem.parts[p].keys {
			second.Restore(p, k)
		}
	}
	for u, host := range urls {
		if isNew, _ := second.Add(host, u, mem.Add); isNew {
			t.Fatalf("%s new again after the restart", u)
		}
	}
	if st := second.Stats(); st.FalsePositives != 0 {
		t.Fatalf("stats %+v: restored keys must be found by the filter and confirmed by the store", st)
	}
}

// TestWarmingConfirmsInTheStore runs a restarted Set whose filters are
// rebuilt while URLs are added: no stored URL is found new at any point,
// new URLs are, and once warming stops, filter negatives no longer ask the
// store.
func TestWarmingConfirmsInTheStore(t *testing.T) {
	mem := NewMemoryStore(4)
	first, _ := New(Config{ExpectedURLs: 1000, Partitions: 4}, mem)
	var old []string
	for i := range 400 {
		u := fmt.Sprintf("http://h%d.test/%d", i%10, i)
		old = append(old, u)
		first.Add(fmt.Sprintf("h%d.test", i%10), u, mem.Add)
	}
	second, _ := New(Config{ExpectedURLs: 1000, Partitions: 4}, mem)
	second.StartWarming()
	// A few before the rebuild starts, whose filters then hold nothing:
	// only the store can say they are known. (Left to the scheduler, the
	// rebuild can finish before the first Add and leave nothing to test.)
	for i, u := range old[:50] {
		if isNew, err := second.Add(fmt.Sprintf("h%d.test", i%10), u, mem.Add); err != nil || isNew {
			t.Fatalf("stored URL %s found new before the rebuild (err %v)", u, err)
		}
	}
	var wg sync.WaitGroup
	wg.Go(func() { // the rebuild, concurrent with the crawl
		for p := range mem.parts {
			mem.parts[p].mu.Lock()
			keys := make([]Key, 0, len(mem.parts[p].keys))
			for k := range mem.parts[p].keys {
				keys = append(keys, k)
			}
			mem.parts[p].mu.Unlock()
			for _, k := range keys {
				second.Restore(p, k)
			}
		}
	})
	for i, u := range old {
		if isNew, err := second.Add(fmt.Sprintf("h%d.test", i%10), u, mem.Add); err != nil || isNew {
			t.Fatalf("stored URL %s found new while warming (err %v)", u, err)
		}
	}
	wg.Wait()
	second.StopWarming()
	if st := second.Stats(); st.WarmLookups == 0 || st.Warming {
		t.Errorf("stats %+v: warming made no store lookups, or did not stop", st)
	}
	before := second.Stats().WarmLookups
	for i := range 100 {
		u := fmt.Sprintf("http://new%d.test/", i)
		if isNew, _ := second.Add(fmt.Sprintf("new%d.test", i), u, mem.Add); !isNew {
			t.Fatalf("new URL %s not found new", u)
		}
	}
	if st := second.Stats(); st.WarmLookups != before {
		t.Errorf("%d store lookups after warming stopped", st.WarmLookups-before)
	}
}

// A key staged in a batch not yet committed is seen by everyone at once:
// the store does not have it yet, but it must not be accepted twice.
func TestStagedKeysArePendingUntilSettled(t *testing.T) {
	mem := NewMemoryStore(1)
	s, _ := New(Config{ExpectedURLs: 1000}, mem)
	var staged []Pending
	stage := func(p int, k Key) (bool, error) {
		staged = append(staged, Pending{p, k})
		return true, nil
	}
	if isNew, _ := s.Add("a.test", "http://a.test/x", stage); !isNew {
		t.Fatal("first add not new")
	}
	if isNew, _ := s.Add("a.test", "http://a.test/x", stage); isNew {
		t.Fatal("staged key accepted again before its commit")
	}
	if st := s.Stats(); st.FalsePositives != 0 {
		t.Fatalf("a pending key counted as a false positive: %+v", st)
	}
	for _, pk := range staged { // the batch commits
		mem.Add(pk.Partition, pk.Key)
	}
	s.Settle(staged)
	if isNew, _ := s.Add("a.test", "http://a.test/x", stage); isNew {
		t.Fatal("settled key accepted again")
	}
	if len(s.parts[0].pending) != 0 {
		t.Fatal("settled key still pending")
	}
}

// screening is an Admission that counts its screens and records in mem.
type screening struct {
	mem      *MemoryStore
	screens  int
	refuse   error
	recorded int
}

func (a *screening) Screen() error { a.screens++; return a.refuse }

func (a *screening) Record(p int, k Key) (bool, error) {
	a.recorded++
	return a.mem.Add(p, k)
}

// AddKey screens a URL only when its cache does not know it: a URL met
// lately is answered from the cache, unscreened and without the store,
// and counted as a cache hit; one the cache has forgotten is screened and
// then found seen in the store. A screen's refusal leaves the URL unseen,
// returned as it is, and a URL screened and recorded once is recorded
// once however often it is added.
func TestAddKeyScreensOnlyWhatTheCacheDoesNotKnow(t *testing.T) {
	mem := NewMemoryStore(1)
	asked := 0
	counting := storeFunc(func(p int, host string, k Key) (bool, error) { asked++; return mem.Has(p, host, k) })
	s, err := New(Config{ExpectedURLs: 1, FalsePositiveRate: 0.5, CacheKeys: 100}, counting) // false positives galore; a small cache
	if err != nil {
		t.Fatal(err)
	}
	a := &screening{mem: mem}
	const n = 2000
	for i := range n {
		u := fmt.Sprintf("http://a.test/%d", i)
		if isNew, err := s.AddKey("a.test", u, KeyOf(u), a); err != nil || !isNew {
			t.Fatalf("URL %d: AddKey = %v, %v", i, isNew, err)
		}
		screens, before := a.screens, asked
		if isNew, err := s.AddKey("a.test", u, KeyOf(u), a); err != nil || isNew {
			t.Fatalf("URL %d added again: %v, %v", i, isNew, err)
		}
		if a.screens != screens || asked != before {
			t.Fatalf("URL %d, met a moment ago, was screened or asked of the store", i)
		}
	}
	if a.screens != n || a.recorded != n {
		t.Fatalf("%d screens and %d records for %d URLs", a.screens, a.recorded, n)
	}
	st := s.Stats()
	if st.Added != n || st.CacheHits < n {
		t.Fatalf("stats %+v: want %d added and at least as many cache hits", st, n)
	}
	// Evicted from the small cache: screened again, and still seen.
	screens := a.screens
	if isNew, _ := s.AddKey("a.test", "http://a.test/0", KeyOf("http://a.test/0"), a); isNew || a.screens != screens+1 {
		t.Fatalf("URL 0 after leaving the cache: new %v, %d screens, want seen after one more", isNew, a.screens-screens)
	}
	// A refusal leaves the URL unseen.
	no := errors.New("refused")
	a.refuse = no
	if isNew, err := s.AddKey("a.test", "http://a.test/no", KeyOf("http://a.test/no"), a); isNew || err != no {
		t.Fatalf("screen refused: AddKey = %v, %v; want false and the screen's error", isNew, err)
	}
	a.refuse = nil
	if isNew, err := s.AddKey("a.test", "http://a.test/no", KeyOf("http://a.test/no"), a); !isNew || err != nil {
		t.Fatalf("after a refusal: AddKey = %v, %v; want it new", isNew, err)
	}
}

type storeFunc func(p int, host string, k Key) (bool, error)

func (f storeFunc) Has(p int, host string, k Key) (bool, error) { return f(p, host, k) }

// KeyOf allocates nothing for a URL of usual length: it runs for every
// link of every page.
func TestKeyOfAllocatesNothing(t *testing.T) {
	u := "http://127.0.0.1:8080/news/2026/03/certain-system-about-pose-8.html?page=2&section=world"
	if n := testing.AllocsPerRun(100, func() { KeyOf(u) }); n != 0 {
		t.Errorf("KeyOf: %v allocations", n)
	}
	long := u + strings.Repeat("/x", 200)
	want := sha256.Sum256([]byte(long))
	if k := KeyOf(long); string(k[:]) != string(want[:16]) {
		t.Error("KeyOf of a long URL is not the first 16 bytes of its SHA-256")
	}
}

// Unseen is sure only of a URL never added, and only with warm filters:
// an added URL, staged or restored, is never unseen.
func TestUnseen(t *testing.T) {
	mem := NewMemoryStore(4)
	s, _ := New(Config{ExpectedURLs: 1000, Partitions: 4}, mem)
	added := "http://h1.test/a"
	s.Add("h1.test", added, mem.Add)
	if s.Unseen("h1.test", KeyOf(added)) {
		t.Error("an added URL is unseen")
	}
	fresh := 0
	for i := range 100 {
		if s.Unseen(fmt.Sprintf("h%d.test", i%7), KeyOf(fmt.Sprintf("http://h%d.test/%d", i%7, i))) {
			fresh++
		}
	}
	if fresh < 95 {
		t.Errorf("%d of 100 URLs never added are unseen; the filter's rate is 1 %%", fresh)
	}
	// A restarted Set: a restored key is not unseen, and while its filters
	// are rebuilt nothing is.
	again, _ := New(Config{ExpectedURLs: 1000, Partitions: 4}, mem)
	again.StartWarming()
	if again.Unseen("h9.test", KeyOf("http://h9.test/never")) {
		t.Error("unseen while warming")
	}
	for p := range mem.parts {
		for k := range mem.parts[p].keys {
			again.Restore(p, k)
		}
	}
	again.StopWarming()
	if again.Unseen("h1.test", KeyOf(added)) || !again.Unseen("h9.test", KeyOf("http://h9.test/never")) {
		t.Error("after the rebuild: a restored key unseen, or a URL never added not")
	}
}
