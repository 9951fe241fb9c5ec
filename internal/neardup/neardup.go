// Package neardup judges pages for near-duplicates of the pages a crawl
// has kept as originals: it holds their SimHash fingerprints in memory
// and what each stands for in the store.
package neardup

import (
	"sync"

	"github.com/weft-crawler/weft/internal/extract"
	"github.com/weft-crawler/weft/internal/simhash"
	"github.com/weft-crawler/weft/internal/store"
)

// Index holds the SimHash fingerprints of the pages judged original
// so far, and of their direct copies, in memory (56 bytes each, up to a
// configured number), and judges each new page against them. What each
// stands for is in the store (table 'S'), read only on a match: a page's
// fingerprint is written in its page's batch, and waits in pending, where
// other workers find it, until that batch commits (Settle). It is safe
// for concurrent use.
type Index struct {
	threshold int
	capacity  int
	db        *store.DB
	mu        sync.Mutex
	ix        simhash.Index
	pending   map[uint64]store.SimRecord
	full      bool // capacity reached: new pages are judged, not added
	// listings holds, by original, what the near-duplicates that list
	// other things (links.go) linked to, and how many there were, in this
	// run: at most maxListings originals, all forgotten past that.
	listings map[string]*listing
}

// listing is what an original's near-duplicates listing other things
// linked to, a Bloom filter wider than a stored original's (a hundred
// pages of a listing may link a few thousand things), and how many it
// vouched for.
type listing struct {
	links  [listWords]uint64
	listed int
}

// maxListings bounds Index.listings, about 1.1 KB each with the URL.
const (
	maxListings = 1 << 12
	listWords   = 128
	listBits    = listWords * 64
)

// New returns an empty index of pages within threshold bits of each
// other, that holds up to capacity fingerprints.
func New(threshold, capacity int, db *store.DB) *Index {
	return &Index{threshold: threshold, capacity: capacity, db: db, pending: map[uint64]store.SimRecord{}, listings: map[string]*listing{}}
}

// Verdict is what Judge found of a page.
type Verdict struct {
	// Of is the URL of the page it nearly copies, "" for none.
	Of string
	// Added says that its fingerprint joined the index, written in the
	// page's batch: Settle forgets it once that batch has committed.
	Added bool
	// Filled says that the index just reached its capacity.
	Filled bool
	// NewLinks says that the page, within the threshold of an earlier
	// one, links to things that page and those of its matches do not,
	// nor the pages listing other things its original vouched for
	// (links.go): it lists other things in the same words, and its links
	// are followed as an original's are.
	NewLinks bool
	// Match says that its words are within the threshold of an earlier
	// page's, Of or one deeper than it (which it stands for from now on).
	Match bool
}

// Judge returns, as Of, the URL of an earlier original page within the
// threshold of fp, or of one of its copies, whose links were followed at
// depth or shallower (the shallowest of those within the threshold,
// whatever the order they came in): the page at url is a near-duplicate
// of it. Otherwise Of is "", and, if follow says the page's own links are
// followed, fp joins the index (in b) as an original while there is
// room: only such a page may stand for the links of its copies.
//
// A copy found near an original itself joins the index as that
// original's copy, so that the original's other copies are found through
// it whichever of them came first: variants of one page are each a few
// bits from it and twice that from each other. A copy found through a
// copy does not join, so a chain of small edits strays at most twice the
// threshold from its original before a page of it is judged original.
//
// links is what the page links to (nil: not known; see links.go): a page
// within the threshold that links to other things is told so
// (Verdict.NewLinks). A near-duplicate whose links are followed is so
// only while its original vouches for no more than maxListed such pages
// in the run; one fetched again (refetch, a recrawl) or whose links are
// not followed is compared, and vouches for nothing.
func (n *Index) Judge(fp uint64, links []extract.Link, url string, depth int, follow, refetch bool, b *store.Batch) (Verdict, error) {
	var m simhash.Match
	var orig store.SimRecord
	var known bool
	// A page has a few matches at most: room for them on the stack.
	var (
		mbuf [4]simhash.Match
		rbuf [4]store.SimRecord
		hbuf [4]bool
	)
	n.mu.Lock()
	matches := n.ix.Within(mbuf[:0], fp, n.threshold)
	recs, held := rbuf[:0], hbuf[:0]
	for _, x := range matches {
		r, ok := n.pending[x.FP]
		recs, held = append(recs, r), append(held, ok)
	}
	n.mu.Unlock()
	for i, x := range matches {
		r, ok := recs[i], held[i]
		if !ok {
			// A committed row does not change: read it without the lock.
			// Not known: the batch that held it failed, and the crawl is
			// stopping.
			var err error
			if r, ok, err = n.db.GetSimHash(x.FP); err != nil {
				return Verdict{}, err
			}
			recs[i] = r
		}
		if ok && (!known || r.URL == url || r.Depth < orig.Depth && orig.URL != url) {
			m, orig, known = x, r, true
		}
	}
	if known && orig.URL == url {
		return Verdict{}, nil // itself, fetched again: held already
	}
	if !known && !follow {
		return Verdict{}, nil // neither compared nor kept: its links are not read
	}
	// What the page's matches link to, and the near-duplicates listing
	// other things that their original vouched for in this run.
	var theirs [store.LinkWords]uint64
	for i := range matches {
		for w := range theirs {
			theirs[w] |= recs[i].Links[w]
		}
	}
	var listed [listWords]uint64 // a copy: two pages judged at once may both vouch
	n.mu.Lock()
	if l := n.listings[orig.URL]; known && l != nil {
		listed = l.links
	}
	n.mu.Unlock()
	ids := idParamsOf(links)
	filter, news := linksAgainst(links, ids, url, &theirs, &listed)
	v := Verdict{Match: known, NewLinks: known && links != nil && news >= newLinks}
	if v.NewLinks && orig.Depth <= depth && follow && !refetch {
		v.NewLinks = n.vouch(orig.URL, links, ids)
	}
	switch {
	case known && orig.Depth <= depth:
		v.Of = orig.URL
		if !orig.Copy && m.Dist > 0 {
			v.Added, v.Filled = n.add(fp, store.SimRecord{URL: orig.URL, Depth: orig.Depth, Copy: true, Links: orig.Links}, b)
		}
		return v, nil
	case !follow:
		return v, nil
	}
	// An original; or a copy of a page whose links were followed deeper
	// than this one's are, which stands for them from now on.
	v.Added, v.Filled = n.add(fp, store.SimRecord{URL: url, Depth: depth, Links: filter}, b)
	return v, nil
}

// vouch records that the original at url vouched for one more
// near-duplicate listing other things, which links to links, and reports
// whether it may: at most maxListed in a run.
func (n *Index) vouch(url string, links []extract.Link, ids *idParams) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	l := n.listings[url]
	if l == nil {
		if len(n.listings) >= maxListings {
			clear(n.listings) // bounded memory; a trap starts again at worst
		}
		l = new(listing)
		n.listings[url] = l
	}
	if l.listed >= maxListed {
		return false
	}
	l.listed++
	for _, link := range links {
		path, _ := linkKeys(link.URL, ids)
		for _, b := range bloomBits(path, listBits) {
			l.links[b/64] |= 1 << (b % 64)
		}
	}
	return true
}

// add puts fp in the index and in b while there is room, and reports
// whether it did and whether the index just reached its capacity.
func (n *Index) add(fp uint64, r store.SimRecord, b *store.Batch) (added, filled bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.full {
		return false, false
	}
	n.ix.Add(fp)
	n.pending[fp] = r
	b.PutSimHash(fp, r)
	n.full = n.ix.Len() >= n.capacity
	return true, n.full
}

// Settle forgets the pending fingerprints of a batch that has committed
// (or failed, which stops the crawl): those Judge added in it.
func (n *Index) Settle(fps []uint64) {
	if len(fps) == 0 {
		return
	}
	n.mu.Lock()
	for _, fp := range fps {
		delete(n.pending, fp)
	}
	n.mu.Unlock()
}

// Restore adds the fingerprints an earlier run recorded, up to capacity,
// and returns how many the index holds.
func (n *Index) Restore() (int, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	err := n.db.ScanSimHashes(func(fp uint64, _ store.SimRecord) bool {
		n.ix.Add(fp)
		n.full = n.ix.Len() >= n.capacity
		return !n.full
	})
	return n.ix.Len(), err
}
