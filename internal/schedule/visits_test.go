package schedule

import (
	"testing"
	"time"

	"github.com/weft-crawler/weft/internal/partition"
	"github.com/weft-crawler/weft/internal/recrawl"
	"github.com/weft-crawler/weft/internal/seen"
	"github.com/weft-crawler/weft/internal/store"
)

// TestVisitStage: a visit leaves its URL one recrawl index entry, at its
// next crawl, in place of the one it had; none when the URL was rejected
// or queued again, or for a crawl that ends; and the host's prior it
// pooled.
func TestVisitStage(t *testing.T) {
	now := time.Now().Truncate(time.Millisecond)
	old := store.URLRecord{URL: "http://a.test/p", Status: store.URLDone, LastFetch: now.Add(-time.Hour), NextCrawl: now.Add(-time.Minute)}
	prior := store.PriorRecord{Visits: 3, Changes: 1, Span: 60}
	for _, c := range []struct {
		name  string
		v     *Visit
		st    store.URLStatus
		due   []time.Time
		prior bool
	}{
		{"a visit", &Visit{prevDue: old.NextCrawl, prior: &prior}, store.URLDone, []time.Time{now.Add(time.Hour)}, true},
		{"a failed visit", &Visit{prevDue: old.NextCrawl}, store.URLFailed, []time.Time{now.Add(time.Hour)}, false},
		{"a refusal", &Visit{prevDue: old.NextCrawl}, store.URLRejected, nil, false},
		{"a redirect to itself", &Visit{prevDue: old.NextCrawl}, store.URLQueued, nil, false},
		{"a crawl that ends", Once(store.URLRecord{}), store.URLDone, []time.Time{old.NextCrawl}, false},
		{"no visit", nil, store.URLDone, []time.Time{old.NextCrawl}, false},
	} {
		p := newPlanner(t, Config{Policy: &recrawl.Policy{}})
		put(t, p, old)
		part := uint16(partition.Of("a.test", p.parts))
		b := p.db.NewBatch()
		r := old
		r.Status, r.LastFetch, r.NextCrawl = c.st, now, now.Add(time.Hour)
		c.v.Stage(b, part, "a.test", seen.KeyOf(r.URL), r)
		if err := b.Commit(false); err != nil {
			t.Fatal(err)
		}
		if due := dueTimes(t, p, r.URL); !equalTimes(due, c.due) {
			t.Errorf("%s: index entries %v, want %v", c.name, due, c.due)
		}
		if _, ok, err := p.db.GetPrior(part, "a.test"); err != nil || ok != c.prior {
			t.Errorf("%s: host prior stored %t (%v), want %t", c.name, ok, err, c.prior)
		}
	}
}

// TestVisitedElsewhere: in a cluster, a lease whose URL another node
// fetched since it was queued here, and which is not due again, takes
// that node's visit; anything else is fetched here.
func TestVisitedElsewhere(t *testing.T) {
	now := time.Now()
	queued := now.Add(-time.Hour)
	visited := store.URLRecord{URL: "http://a.test/p", Depth: 1, Status: store.URLDone, LastStatus: 200, LastFetch: now.Add(-time.Minute),
		NextCrawl: now.Add(time.Hour), InLinks: 3, SitemapPriority: -1}
	for _, c := range []struct {
		name   string
		shared bool
		rec    store.URLRecord
		robots string
		seq    uint64
		want   bool
	}{
		{"another node's visit", true, visited, "", 1, true},
		{"one node", false, visited, "", 1, false},
		{"a robots.txt lease", true, visited, "http://a.test/", 1, false},
		{"an external fetcher's URL", true, visited, "", 0, false},
		{"a visit before it was queued", true, store.URLRecord{URL: visited.URL, Status: store.URLDone, LastFetch: queued.Add(-time.Minute), NextCrawl: now.Add(time.Hour)}, "", 1, false},
		{"due again", true, store.URLRecord{URL: visited.URL, Status: store.URLDone, LastFetch: now.Add(-time.Minute), NextCrawl: now.Add(-time.Second)}, "", 1, false},
	} {
		p := newPlanner(t, Config{Policy: &recrawl.Policy{}, SharedVisits: c.shared})
		put(t, p, c.rec)
		l := lease(visited.URL, "a.test")
		l.Added, l.RobotsFor, l.Seq = queued, c.robots, c.seq
		v, ok := p.VisitedElsewhere(l)
		if ok != c.want {
			t.Errorf("%s: taken %t, want %t", c.name, ok, c.want)
			continue
		}
		if ok && (!v.Adopted || !v.Record.NextCrawl.Equal(visited.NextCrawl) || v.Importance != recrawl.Importance(recrawl.Signals{InLinks: 3, Priority: -1})) {
			t.Errorf("%s: %+v; want the node's record, adopted, with its importance", c.name, v)
		}
	}
}

func equalTimes(a, b []time.Time) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !a[i].Equal(b[i]) {
			return false
		}
	}
	return true
}
