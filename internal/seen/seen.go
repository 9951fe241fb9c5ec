// Package seen answers "has this canonical URL been accepted before?" for a
// crawl of any size, in memory for almost every URL.
//
// A Bloom filter per partition answers "definitely new" at once. Its "maybe"
// is confirmed in an exact Store, so a false positive never drops a URL that
// was never seen; confirmations and false positives are counted so that an
// operator sees when a filter is too full. Most links of a page lead to
// pages seen before, each one a true "maybe": a bounded exact cache of the
// keys lately confirmed or recorded answers those without the store, so a
// URL linked from a thousand pages costs one lookup, not a thousand. The set is split by host
// partition (package partition), like every other piece of crawl state, so
// no lock spans hosts of different partitions.
package seen

import (
	"crypto/sha256"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/bits-and-blooms/bloom/v3"

	"github.com/weft-crawler/weft/internal/partition"
)

// Key identifies a canonical URL: the first 16 bytes of its SHA-256. At
// 10^10 URLs the chance of any collision is about 10^-19.
type Key [16]byte

// KeyOf returns the key of a canonical URL.
func KeyOf(canonicalURL string) Key {
	// A URL of usual length is hashed from a copy on the stack: the
	// conversion []byte(canonicalURL) allocated one on the heap for every
	// link of every page (a sixth of the crawl's allocations).
	var buf [256]byte
	var sum [sha256.Size]byte
	if len(canonicalURL) <= len(buf) {
		sum = sha256.Sum256(append(buf[:0], canonicalURL...))
	} else {
		sum = sha256.Sum256([]byte(canonicalURL))
	}
	var k Key
	copy(k[:], sum[:16])
	return k
}

// Store is the exact record of accepted keys that confirms the filter's
// "maybe". Has must report true for every key recorded before (through the
// record function given to Set.Add), by any goroutine. Calls for keys of one
// partition are serialised by the Set; calls for different partitions may
// run concurrently.
type Store interface {
	Has(partition int, host string, k Key) (bool, error)
}

// Recorder records an accepted key in the exact store, together with
// whatever must be written atomically with it (the URL's queue entry), so
// that a crash never leaves a URL seen but not queued. It may only stage
// the write (in a batch committed later): then it returns staged true, and
// the key is held as pending, counted as seen, until Settle is called for
// it after the commit.
type Recorder func(partition int, k Key) (staged bool, err error)

// Admission is what a Set asks of a URL on the way to adding it, for a
// caller whose rules must run with the set's answer.
type Admission interface {
	// Screen runs when the set does not know the URL without its store
	// (its cache of keys met lately), before it looks further and
	// outside any lock: the checks that need no atomicity with the set,
	// which a URL met lately is spared. An error refuses the URL, which
	// stays unseen; the error is returned as it is.
	Screen() error
	// Record runs under the lock of the URL's partition once the set
	// has found the URL new, so that it runs exactly once for a URL
	// however many goroutines add it: the checks that must count only
	// new URLs, then the record, as a Recorder. An error refuses the
	// URL, which stays unseen.
	Record(partition int, k Key) (staged bool, err error)
}

// Screen implements Admission: a Recorder screens nothing.
func (r Recorder) Screen() error { return nil }

// Record implements Admission.
func (r Recorder) Record(partition int, k Key) (bool, error) { return r(partition, k) }

// Pending is a key staged by a Recorder and not yet settled.
type Pending struct {
	Partition int
	Key       Key
}

// Config sizes a Set. ExpectedURLs and FalsePositiveRate size each
// partition's filter as ExpectedURLs/Partitions items at that rate.
type Config struct {
	ExpectedURLs      uint    // zero means DefaultExpectedURLs
	FalsePositiveRate float64 // zero means 0.01
	Partitions        int     // zero means 1
	// CacheKeys bounds the cache of keys known to be in the store
	// (about 40 bytes each at most). Zero means DefaultCacheKeys; negative,
	// no cache.
	CacheKeys int
}

// DefaultCacheKeys is the default bound of the confirmed-key cache: about
// 40 MB at most, and room for the links of some 10,000 sites' navigation.
const DefaultCacheKeys = 1 << 20

// DefaultExpectedURLs is Config.ExpectedURLs's default.
const DefaultExpectedURLs = 1_000_000

// Validate reports the first invalid field.
func (c Config) Validate() error {
	if c.FalsePositiveRate < 0 || c.FalsePositiveRate >= 1 {
		return fmt.Errorf("seen: false positive rate %v must be in (0, 1)", c.FalsePositiveRate)
	}
	if c.Partitions < 0 {
		return fmt.Errorf("seen: partitions %d is negative", c.Partitions)
	}
	return nil
}

// Set is safe for concurrent use.
type Set struct {
	parts []part
	store Store
	known *knownKeys // nil: no cache

	maybes         atomic.Int64 // filter said "maybe": the store was asked
	falsePositives atomic.Int64 // ... and the store said "never seen"
	added          atomic.Int64
	warming        atomic.Bool  // filters incomplete: every "no" is asked of the store too
	warmLookups    atomic.Int64 // store lookups made only because of warming
	cacheHits      atomic.Int64 // maybes answered by the cache, not the store
}

// part is one partition's scalable Bloom filter: a list of generations, of
// which only the newest takes new keys. A generation is full when it holds
// the keys it was sized for; the next one is twice as large at half the
// false-positive rate, so the sum over all generations stays below the
// target however skewed the hosts are (Almeida et al., "Scalable Bloom
// Filters", 2007).
type part struct {
	mu      sync.Mutex
	gens    []generation
	pending map[Key]struct{} // staged in a batch not yet committed to the store
}

type generation struct {
	filter   *bloom.BloomFilter
	capacity uint
	count    uint
	fpRate   float64
}

func (p *part) test(k []byte) bool {
	for i := len(p.gens) - 1; i >= 0; i-- { // newest first: recent URLs repeat most
		if p.gens[i].filter.Test(k) {
			return true
		}
	}
	return false
}

func (p *part) add(k []byte) {
	g := &p.gens[len(p.gens)-1]
	if g.count >= g.capacity {
		p.gens = append(p.gens, newGeneration(g.capacity*2, g.fpRate/2))
		g = &p.gens[len(p.gens)-1]
	}
	g.filter.Add(k)
	g.count++
}

func newGeneration(capacity uint, fpRate float64) generation {
	return generation{filter: bloom.NewWithEstimates(capacity, fpRate), capacity: capacity, fpRate: fpRate}
}

// New returns a Set whose maybes are confirmed in store. A nil store makes
// the filter's answer final: a false positive then drops a new URL, which is
// acceptable only where an exact store cannot be had; New(cfg, NewMemoryStore())
// is exact.
func New(cfg Config, store Store) (*Set, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.ExpectedURLs == 0 {
		cfg.ExpectedURLs = DefaultExpectedURLs
	}
	if cfg.FalsePositiveRate == 0 {
		cfg.FalsePositiveRate = 0.01
	}
	if cfg.Partitions == 0 {
		cfg.Partitions = 1
	}
	per := max(cfg.ExpectedURLs/uint(cfg.Partitions), 1024)
	s := &Set{parts: make([]part, cfg.Partitions), store: store}
	if cfg.CacheKeys == 0 {
		cfg.CacheKeys = DefaultCacheKeys
	}
	if store != nil && cfg.CacheKeys > 0 {
		s.known = newKnownKeys(cfg.CacheKeys)
	}
	for i := range s.parts {
		// Generations' rates halve: the first gets half the target so
		// that their sum, target/2 * (1 + 1/2 + 1/4 + ...), stays below it.
		s.parts[i].gens = []generation{newGeneration(per, cfg.FalsePositiveRate/2)}
	}
	return s, nil
}

// Add reports whether the URL with the given host is new and, if it is,
// records it: in the filter, and through record (nil: the filter alone).
// record runs under the partition's lock, so a URL is new exactly once
// however many goroutines add it; if record fails, the URL is not recorded
// and the error is returned.
func (s *Set) Add(host, canonicalURL string, record Recorder) (bool, error) {
	if record == nil {
		return s.AddKey(host, canonicalURL, KeyOf(canonicalURL), nil)
	}
	return s.AddKey(host, canonicalURL, KeyOf(canonicalURL), record)
}

// AddKey is Add for a caller that has the URL's key (KeyOf) already, and
// whose admission a (nil: none) screens the URL and records it. A key the
// cache of keys met lately holds is known at once, without screening the
// URL or taking a lock: most links a crawl comes upon lead to pages it
// has met lately, and cost only this.
func (s *Set) AddKey(host, canonicalURL string, k Key, a Admission) (bool, error) {
	depth := -1
	if l, ok := a.(Linked); ok {
		depth = l.LinkDepth()
	}
	if s.store != nil && s.known.met(k, depth) {
		s.count(answer{maybe: true, source: inCache})
		return false, nil
	}
	if a != nil {
		if err := a.Screen(); err != nil {
			return false, err
		}
	}
	p := partition.Of(host, len(s.parts))
	pt := &s.parts[p]
	pt.mu.Lock()
	defer pt.mu.Unlock()
	ans, err := s.lookup(pt, p, host, k, canonicalURL)
	if err != nil {
		return false, err
	}
	s.count(ans)
	if ans.seen() {
		s.known.met(k, depth) // confirmed by the store just now
		return false, nil
	}
	if a != nil {
		staged, err := a.Record(p, k)
		if err != nil {
			return false, fmt.Errorf("seen: record %s: %w", canonicalURL, err)
		}
		if staged {
			if pt.pending == nil {
				pt.pending = map[Key]struct{}{}
			}
			pt.pending[k] = struct{}{}
		} else {
			s.known.put(k) // in the store already
		}
	}
	pt.add(k[:])
	s.added.Add(1)
	return true, nil
}

// Unseen reports whether the URL of host whose key is k was surely never
// added: its partition's filter says no, and the filters are warm. It is
// for a reader that would otherwise look the URL up in the store for
// nothing (the captures of a URL never queued); a "maybe" is false.
func (s *Set) Unseen(host string, k Key) bool {
	if s.warming.Load() {
		return false
	}
	pt := &s.parts[partition.Of(host, len(s.parts))]
	pt.mu.Lock()
	defer pt.mu.Unlock()
	return !pt.test(k[:])
}

// answer is what lookup found.
type answer struct {
	maybe  bool  // the filter said "maybe"
	asked  bool  // the store was asked (a maybe, or any key while warming)
	source uint8 // where the key was found: notFound, inPending, inCache, inStore
}

const (
	notFound uint8 = iota
	inPending
	inCache
	inStore
)

func (a answer) seen() bool { return a.source != notFound }

// lookup finds k under pt's lock: in the cache of confirmed keys; then in
// the filter, which settles a "no" unless the filters are warming; then
// among the keys staged but not yet committed, and in the store. With no
// store a filter's "maybe" is final.
func (s *Set) lookup(pt *part, p int, host string, k Key, canonicalURL string) (answer, error) {
	if s.store != nil && s.known.has(k) {
		// Most keys asked for are cached (a page's links lead to pages
		// seen before). A cached key is in the store, so in the filter
		// too: the "maybe" it would give is taken without testing it.
		return answer{maybe: true, source: inCache}, nil
	}
	a := answer{maybe: pt.test(k[:])}
	if a.maybe && s.store == nil {
		a.source = inStore
		return a, nil
	}
	if !a.maybe && (s.store == nil || !s.warming.Load()) {
		return a, nil
	}
	if _, ok := pt.pending[k]; ok {
		a.source = inPending // accepted moments ago; its batch is not committed yet
		return a, nil
	}
	a.asked = true
	has, err := s.store.Has(p, host, k)
	if err != nil {
		return a, fmt.Errorf("seen: confirm %s: %w", canonicalURL, err)
	}
	if has {
		s.known.put(k)
		a.source = inStore
	}
	return a, nil
}

// count adds what lookup found to the Set's counters.
func (s *Set) count(a answer) {
	if a.source == inPending || s.store == nil {
		return
	}
	if a.maybe {
		s.maybes.Add(1)
	}
	switch {
	case a.source == inCache:
		s.cacheHits.Add(1)
	case a.asked && !a.maybe:
		s.warmLookups.Add(1)
	}
	if a.asked && a.maybe && !a.seen() {
		s.falsePositives.Add(1)
	}
}

// Settle forgets keys staged by a Recorder once their batch is committed:
// the store answers for them from now on, and the cache, where a new
// page's key is most likely asked for again soon, in the links of the
// pages around it.
func (s *Set) Settle(keys []Pending) {
	for _, pk := range keys {
		pt := &s.parts[pk.Partition]
		pt.mu.Lock()
		delete(pt.pending, pk.Key)
		pt.mu.Unlock()
		s.known.put(pk.Key)
	}
}

// Restore puts a key recorded by a previous run back into the filter of
// its partition, without asking the store (which holds it already). It is
// how a restarted crawl rebuilds its filters from the durable store.
func (s *Set) Restore(partition int, k Key) {
	if partition < 0 || partition >= len(s.parts) {
		partition = 0
	}
	pt := &s.parts[partition]
	pt.mu.Lock()
	pt.add(k[:])
	pt.mu.Unlock()
}

// StartWarming tells the Set that its filters do not yet hold every key
// the store does (a restarted crawl rebuilding them with Restore while it
// runs): until StopWarming, a filter's "definitely new" is confirmed in the
// store too, so the crawl can go on at once without accepting a URL twice.
func (s *Set) StartWarming() { s.warming.Store(true) }

// StopWarming ends warming: every key the store held when it started has
// been restored.
func (s *Set) StopWarming() { s.warming.Store(false) }

// Linked is an Admission of a link met at a depth, link hops from a seed
// (LinkDepth; negative for none): when AddKey finds the URL seen, it
// notes the depth under the same look. The least is kept while the key
// stays in the cache of keys met lately (Config.CacheKeys), and Depth
// returns it: a URL first found deep, queued at that depth, is fetched
// at the least, so that the depth limit stops where it would had the
// crawl gone breadth first.
type Linked interface {
	Admission
	LinkDepth() int
}

// Depth returns the least depth a Linked admission noted of k, if the
// cache holds one.
func (s *Set) Depth(k Key) (int, bool) { return s.known.depth(k) }

// Stats counts the Set's work.
type Stats struct {
	Added          int64 // URLs found new
	Maybes         int64 // filter positives confirmed in the store or answered by the cache (whose keys the filter holds once warm)
	FalsePositives int64 // of which the store had never seen the URL
	WarmLookups    int64 // store lookups made while the filters were rebuilt
	CacheHits      int64 // maybes answered by the confirmed-key cache
	CacheKeys      int   // keys the cache holds
	Warming        bool  // the filters are being rebuilt
	Generations    int   // filter generations over all partitions
	FilterBytes    int64 // memory held by the filters
}

// Stats returns the counters, at the cost of a lock per partition: what
// the crawl's summary and live view ask for every time they are read.
// The filters' fill ratio, which reads every bit, is FillRatio.
func (s *Set) Stats() Stats {
	st := Stats{Added: s.added.Load(), Maybes: s.maybes.Load(), FalsePositives: s.falsePositives.Load(),
		WarmLookups: s.warmLookups.Load(), Warming: s.warming.Load(), CacheHits: s.cacheHits.Load(), CacheKeys: s.known.len()}
	var total uint
	for i := range s.parts {
		pt := &s.parts[i]
		pt.mu.Lock()
		for _, g := range pt.gens {
			total += g.filter.Cap()
		}
		st.Generations += len(pt.gens)
		pt.mu.Unlock()
	}
	st.FilterBytes = int64(total / 8)
	return st
}

// FillRatio is the fraction of the filters' bits set, over all
// generations. It counts every bit, a partition's lock held while its
// filters are counted: for the metrics, not for a view read every second.
func (s *Set) FillRatio() float64 {
	var set, total uint
	for i := range s.parts {
		pt := &s.parts[i]
		pt.mu.Lock()
		for _, g := range pt.gens {
			set += g.filter.BitSet().Count()
			total += g.filter.Cap()
		}
		pt.mu.Unlock()
	}
	if total == 0 {
		return 0
	}
	return float64(set) / float64(total)
}

// MemoryStore is an exact Store in memory, one map per partition, each
// with its own lock. It grows with the crawl; the durable store of a long
// crawl keeps keys on disk.
type MemoryStore struct {
	parts []memPart
}

type memPart struct {
	mu   sync.Mutex
	keys map[Key]struct{}
}

// NewMemoryStore returns an empty MemoryStore for the given number of
// partitions (at least 1); a partition out of range is folded into range.
func NewMemoryStore(partitions int) *MemoryStore {
	m := &MemoryStore{parts: make([]memPart, max(partitions, 1))}
	for i := range m.parts {
		m.parts[i].keys = map[Key]struct{}{}
	}
	return m
}

func (m *MemoryStore) part(p int) *memPart {
	if p < 0 {
		p = -p
	}
	return &m.parts[p%len(m.parts)]
}

// Has implements Store.
func (m *MemoryStore) Has(p int, _ string, k Key) (bool, error) {
	mp := m.part(p)
	mp.mu.Lock()
	defer mp.mu.Unlock()
	_, ok := mp.keys[k]
	return ok, nil
}

// Add records k at once; it is a Recorder.
func (m *MemoryStore) Add(p int, k Key) (bool, error) {
	mp := m.part(p)
	mp.mu.Lock()
	defer mp.mu.Unlock()
	mp.keys[k] = struct{}{}
	return false, nil
}
