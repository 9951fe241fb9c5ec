package schedule

import (
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/weft-crawler/weft/internal/canon"
	"github.com/weft-crawler/weft/internal/frontier"
	"github.com/weft-crawler/weft/internal/partition"
	"github.com/weft-crawler/weft/internal/robots"
	"github.com/weft-crawler/weft/internal/scope"
	"github.com/weft-crawler/weft/internal/seen"
	"github.com/weft-crawler/weft/internal/store"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// openStore opens a store under dir, closed when the test ends unless
// the test closed it first.
func openStore(t *testing.T, dir string) *store.DB {
	t.Helper()
	db, err := store.Open(dir, &store.Options{CacheSize: 1 << 20, MemTableSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// testParts is the partition count of the tests' stores.
const testParts = 4

// sitemapsOf is a robots.txt cache that holds, per origin, the sitemaps
// its file names.
type sitemapsOf map[string][]string

func (s sitemapsOf) Cached(origin string, now time.Time) *robots.Policy {
	maps, ok := s[origin]
	if !ok {
		return nil
	}
	return &robots.Policy{Sitemaps: maps}
}

// archived is an archive whose captures are all still there, or none.
type archived bool

func (a archived) StillArchived(store.DigestRecord) bool { return bool(a) }

// newPlanner makes a Planner over a new store, with cfg's DB, Canon,
// Partitions, Robots and Archive filled in when they are not set.
func newPlanner(t *testing.T, cfg Config) *Planner {
	t.Helper()
	if cfg.DB == nil {
		cfg.DB = openStore(t, t.TempDir())
	}
	if cfg.Canon == nil {
		cfg.Canon = canon.New(canon.Config{})
	}
	if cfg.Partitions == 0 {
		cfg.Partitions = testParts
	}
	if cfg.Robots == nil {
		cfg.Robots = sitemapsOf{}
	}
	if cfg.Archive == nil {
		cfg.Archive = archived(true)
	}
	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// committed is the Queue of a test: it writes the batch and keeps the
// items it would hand to the frontier.
type committed struct{ items []frontier.Item }

func (q *committed) Commit(b *store.Batch, items []frontier.Item) error {
	if err := b.Commit(false); err != nil {
		return err
	}
	q.items = append(q.items, items...)
	return nil
}

// noTraps cuts off the hosts it holds.
type noTraps map[string]bool

func (n noTraps) Trapped(u canon.URL) bool { return n[u.Authority] }

// newRecrawler makes a Recrawler of p's URLs, in the scope of seed's
// domain, whose scans commit to q.
func newRecrawler(t *testing.T, p *Planner, seed string, q *committed, traps noTraps) *Recrawler {
	t.Helper()
	f, err := scope.New(scope.Config{})
	if err != nil {
		t.Fatal(err)
	}
	u, err := p.canon.Parse(seed)
	if err != nil {
		t.Fatal(err)
	}
	f.AddSeed(u)
	return NewRecrawler(p, ScanConfig{Queue: q, Scope: f, Traps: traps, Every: time.Second, Delay: time.Millisecond})
}

// put writes URL records to p's store with their recrawl index entries
// (each of importance 1), and returns their keys by URL.
func put(t *testing.T, p *Planner, recs ...store.URLRecord) map[string]seen.Key {
	t.Helper()
	keys := map[string]seen.Key{}
	b := p.db.NewBatch()
	for _, r := range recs {
		u, err := p.canon.Parse(r.URL)
		if err != nil {
			t.Fatal(err)
		}
		part, k := uint16(partition.Of(u.Authority, p.parts)), seen.KeyOf(r.URL)
		b.PutURL(part, u.Authority, k, r)
		if !Scheduled(r).IsZero() {
			b.PutDue(Entry(part, u.Authority, k, r, 1))
		}
		keys[r.URL] = k
	}
	if err := b.Commit(false); err != nil {
		t.Fatal(err)
	}
	return keys
}

// record reads url's record from p's store.
func record(t *testing.T, p *Planner, url string) store.URLRecord {
	t.Helper()
	u, err := p.canon.Parse(url)
	if err != nil {
		t.Fatal(err)
	}
	r, ok, err := p.db.GetURL(uint16(partition.Of(u.Authority, p.parts)), u.Authority, seen.KeyOf(url))
	if err != nil || !ok {
		t.Fatalf("%s: no record (%v)", url, err)
	}
	return r
}

// dueTimes returns the due times of url's recrawl index entries.
func dueTimes(t *testing.T, p *Planner, url string) []time.Time {
	t.Helper()
	u, err := p.canon.Parse(url)
	if err != nil {
		t.Fatal(err)
	}
	var due []time.Time
	err = p.db.ScanDue(uint16(partition.Of(u.Authority, p.parts)), nil, time.Now().Add(1000*24*time.Hour), func(e store.DueEntry) bool {
		if e.Hash == seen.KeyOf(url) {
			due = append(due, e.Due)
		}
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	return due
}
