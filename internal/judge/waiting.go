package judge

import (
	"container/list"
	"sync"
	"time"

	"github.com/weft-crawler/weft/internal/frontier"
	"github.com/weft-crawler/weft/internal/seen"
)

// Held is a URL held past its family's trap budget, as the judge
// remembers it, for Weigh to hand back once the family has room.
type Held struct {
	Item frontier.Item // as it is to be queued once released: at ReleasedPriority
	Key  seen.Key      // its seen-set key
	// Ranked says Item's rank is the one it was queued with, an
	// operator's boost in it (a URL held when leased, or read back from
	// the queue), which a release does not boost again.
	Ranked bool
}

// Releaser queues a URL held past its family's budget as usual, if it
// still waits at HeldPriority, reporting whether it did
// (state.Batch.Release).
type Releaser interface {
	Release(h Held) bool
}

// DefaultMaxWaiting bounds the URLs held that the judge remembers, in
// all families: about 300 bytes each, 10 MiB; one family remembers at
// most an eighth of them. Past the bound the family that went longest
// without a release (a trap, which only holds) is forgotten whole; past
// a family's share its new URLs held are not remembered. Either way they
// stay queued at HeldPriority, for a continuous crawl to reach when
// nothing else waits. A restart reads them back from the queue they wait
// in (RememberHeld).
const DefaultMaxWaiting = 1 << 15

// waiting holds, per family, the URLs held past its budget, oldest
// first, at most max in all and max/8 a family, the families in the
// order of their last release (or of their first URL held). It is safe
// for concurrent use.
type waiting struct {
	mu   sync.Mutex
	fams map[string]*list.Element // family key -> *waitList in lru
	lru  list.List                // most recently released from (or new) first
	n    int
	max  int
}

type waitList struct {
	fam  string
	urls []Held
}

func newWaiting(max int) *waiting {
	return &waiting{fams: map[string]*list.Element{}, max: max}
}

// add remembers h, held past the budget of the family fam. A nil
// waiting remembers nothing.
func (w *waiting) add(fam string, h Held) {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if e, ok := w.fams[fam]; ok && len(e.Value.(*waitList).urls) >= max(w.max/8, 1) {
		return // its share
	}
	for w.n >= w.max && w.lru.Len() > 0 {
		old := w.lru.Remove(w.lru.Back()).(*waitList)
		delete(w.fams, old.fam)
		w.n -= len(old.urls)
	}
	e, ok := w.fams[fam]
	if !ok {
		e = w.lru.PushFront(&waitList{fam: fam})
		w.fams[fam] = e
	}
	wl := e.Value.(*waitList)
	wl.urls = append(wl.urls, h)
	w.n++
}

// take removes and returns at most n of the URLs the family fam holds,
// oldest first.
func (w *waiting) take(fam string, n int) []Held {
	if w == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	e, ok := w.fams[fam]
	if !ok || n <= 0 {
		return nil
	}
	wl := e.Value.(*waitList)
	n = min(n, len(wl.urls))
	out := append([]Held(nil), wl.urls[:n]...)
	clear(wl.urls[:n])
	wl.urls = wl.urls[n:]
	w.n -= n
	if len(wl.urls) == 0 {
		w.lru.Remove(e)
		delete(w.fams, fam)
	} else {
		w.lru.MoveToFront(e)
	}
	return out
}

// has reports whether the family fam holds URLs.
func (w *waiting) has(fam string) bool {
	if w == nil {
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	_, ok := w.fams[fam]
	return ok
}

// len returns the URLs remembered, in all families.
func (w *waiting) len() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.n
}

// RememberHeld remembers the URLs an earlier run of the crawl held past
// their families' budgets, or behind a wall, given oldest first as they
// wait at HeldPriority, up to DefaultMaxWaiting: a resumed crawl releases
// them as their families' budgets grow, or their walls fall, as the run
// that held them would have. One
// released already, or fetched, is found so when released (Releaser), and
// spends nothing.
// It returns how many it remembers in all, past which it takes no more.
func (j *Judge) RememberHeld(held []frontier.Item) int {
	b := j.budgets
	if b == nil || b.waiting == nil {
		return DefaultMaxWaiting
	}
	for _, it := range held {
		u, err := j.cfg.Canon.Parse(it.URL)
		if err != nil || it.Priority != HeldPriority {
			continue
		}
		fam := b.familyOf(u)
		var k string
		switch in := !fam.none() && b.inLink(u, fam, it.Via); {
		case wallVariant(u, it.Via) != "" && (in || fam.none() || u.Query != "" && fam.kind != queryFamily):
			// A variant of the page that linked it, which its variant
			// shape's wall holds whatever its family (one a page of its
			// own query family linked, a faceted search's filter, may
			// have been that family's budget's, and is remembered as
			// its; so is a tool, without a query, that a page of its own
			// family linked: a calendar's next day), or a tool of a page
			// with no family: that wall, learnt again, releases it if it
			// does not stand (walls.go).
			k = wallKey(wallVariant(u, it.Via))
		case fam.none():
			continue
		case in:
			// An in-link of its host, which only a wall holds: its wall,
			// learnt again, releases it if it does not stand (walls.go).
			k = wallKey(wallShape(u))
		default:
			k = fam.key()
		}
		it.Priority, it.Seq, it.Tail, it.Added = ReleasedPriority, 0, false, time.Time{}
		b.waiting.add(k, Held{Item: it, Key: seen.KeyOf(it.URL), Ranked: true})
	}
	return b.waiting.len()
}
