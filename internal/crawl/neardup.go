package crawl

import (
	"fmt"
	"math/bits"
	"sync"

	"weft/internal/simhash"
	"weft/internal/store"
)

// nearIndex holds the SimHash fingerprints of the pages judged original
// so far, in memory (56 bytes each, up to a configured number), and
// judges each new page against them. Their URLs and depths are in the
// store (table 'S'), read only on a match: a page's fingerprint is written
// in its page's batch, and waits in pending, where other workers find it,
// until that batch commits.
type nearIndex struct {
	threshold int
	capacity  int
	db        *store.DB
	mu        sync.Mutex
	ix        simhash.Index
	pending   map[uint64]nearPage
	full      bool // capacity reached: new pages are judged, not added
}

// nearPage is a page the index holds: where it is, and at what link depth
// its links were followed.
type nearPage struct {
	url   string
	depth int
}

func newNearIndex(threshold, capacity int, db *store.DB) *nearIndex {
	return &nearIndex{threshold: threshold, capacity: capacity, db: db, pending: map[uint64]nearPage{}}
}

// judge returns the URL of an earlier page within the threshold of fp
// whose links were followed at depth or shallower: the page at url is a
// near-duplicate of it. Otherwise it returns "", and, if follow says the
// page's own links are followed, adds fp to the index (in pb) while there
// is room: only such a page may stand for the links of its copies. A
// near-duplicate is not added, so that a chain of small edits is judged
// against its first page, not its last. filled reports that the index
// just reached its capacity.
func (n *nearIndex) judge(fp uint64, url string, depth int, follow bool, pb *pageBatch) (of string, filled bool, err error) {
	n.mu.Lock()
	m, found := n.ix.Near(fp, n.threshold)
	var orig nearPage
	var known bool
	if found {
		orig, known = n.pending[m.FP]
	}
	n.mu.Unlock()
	if found && !known {
		// A committed row does not change: read it without the lock.
		orig.url, orig.depth, known, err = n.db.GetSimHash(m.FP)
		if err != nil {
			return "", false, err
		}
		// Not known: the batch that held it failed, and the crawl is
		// stopping. The page is judged original.
	}
	switch {
	case known && orig.url == url:
		return "", false, nil // itself, fetched again: held already
	case known && orig.depth <= depth:
		return orig.url, false, nil
	case !follow:
		return "", false, nil
	}
	// An original; or a copy of a page whose links were followed deeper
	// than this one's are, which stands for them from now on.
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.full {
		return "", false, nil
	}
	n.ix.Add(fp)
	n.pending[fp] = nearPage{url, depth}
	pb.b.PutSimHash(fp, url, depth)
	pb.sims = append(pb.sims, fp)
	if n.ix.Len() >= n.capacity {
		n.full = true
		return "", true, nil
	}
	return "", false, nil
}

// settle forgets the pending fingerprints of a batch that has committed
// (or failed, which stops the crawl).
func (n *nearIndex) settle(fps []uint64) {
	if len(fps) == 0 {
		return
	}
	n.mu.Lock()
	for _, fp := range fps {
		delete(n.pending, fp)
	}
	n.mu.Unlock()
}

// restore adds the fingerprints an earlier run recorded, up to capacity.
func (n *nearIndex) restore() (int, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	err := n.db.ScanSimHashes(func(fp uint64, _ string, _ int) bool {
		n.ix.Add(fp)
		n.full = n.ix.Len() >= n.capacity
		return !n.full
	})
	return n.ix.Len(), err
}

// nearWindow is a host's record of its last judged pages, for the trap
// cut-off: a ring of bits, one per page, set for a near-duplicate.
type nearWindow struct {
	ring uint64
	n    uint8 // pages in the ring, up to the window
	next uint8 // where the next page goes
	cut  bool  // the host is cut off
}

// metaTrapPrefix + host marks a host cut off, so a resumed crawl keeps it
// so.
const metaTrapPrefix = "trap/"

// noteJudged adds a judged page of host to its window, and cuts the host
// off when most of a full window were near-duplicates.
func (c *Crawler) noteJudged(pb *pageBatch, host string, near bool) {
	size := c.cfg.NearDupTrapWindow
	if size < 0 {
		return
	}
	var tripped bool
	var copies int
	c.recent.update(host, func(w nearWindow) nearWindow {
		if w.cut {
			return w
		}
		bit := uint64(1) << w.next
		if near {
			w.ring |= bit
		} else {
			w.ring &^= bit
		}
		w.next = uint8((int(w.next) + 1) % size)
		w.n = uint8(min(int(w.n)+1, size))
		copies = bits.OnesCount64(w.ring)
		if int(w.n) == size && copies > size/2 {
			w.cut, tripped = true, true
		}
		return w
	})
	if tripped {
		c.stats.traps.add(host)
		c.log.Warn("host cut off: most of its last pages were near-duplicates; no new URLs of it are admitted",
			"host", host, "near_duplicates", copies, "of", size)
		pb.b.PutMeta(metaTrapPrefix+host, nil)
	}
}

// trapped reports whether host was cut off.
func (c *Crawler) trapped(host string) bool {
	w, ok := c.recent.get(host)
	return ok && w.cut
}

// loadTraps marks the hosts an earlier run cut off.
func (c *Crawler) loadTraps() error {
	err := c.state.db.MetaPrefix(metaTrapPrefix, func(host string, _ []byte) bool {
		c.recent.update(host, func(w nearWindow) nearWindow { w.cut = true; return w })
		c.stats.traps.add(host)
		return true
	})
	if err != nil {
		return fmt.Errorf("crawl: read the hosts cut off as traps: %w", err)
	}
	return nil
}
