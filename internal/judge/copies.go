package judge

import (
	"fmt"
	"log/slog"
	"math/bits"
	"slices"
	"sync"

	"github.com/weft-crawler/weft/internal/canon"
	"github.com/weft-crawler/weft/internal/hostmap"
	"github.com/weft-crawler/weft/internal/store"
)

// metaTrapPrefix + host marks a host cut off, so a resumed crawl keeps it
// so.
const metaTrapPrefix = "trap/"

// copies cuts off the hosts that serve mostly near-duplicates: it keeps a
// window of each host's last judged pages, and the hosts cut off, in the
// crawl's per-host states (store.HostState's Near fields), which are
// bounded by the host cache and kept in the store; a cut is also recorded
// in the page's batch, so that it holds after a crash. It is safe for
// concurrent use.
type copies struct {
	window  int                           // pages judged per window; negative: no cut-off
	states  *hostmap.Map[store.HostState] // the crawl's per-host states
	respelt *hostmap.Map[uint8]           // by the hash of a page's URL: its copies under another spelling (respelling)
	log     *slog.Logger

	mu   sync.Mutex
	n    int64    // hosts cut off
	cuts []string // the first of them, for the summary
}

// maxCutNames is how many hosts cut off are named.
const maxCutNames = 20

// JudgedPage adds the page u of host (linked from via), judged for
// near-duplicates (of: the earlier page it copies, "" for none), to the
// host's window, and cuts the host off (in b, for a restart) when most of
// a full window were near-duplicates: no new URL of it is admitted from
// then on. A copy whose shape, or variant
// shape, is a wall of copies already (walls.go) is
// left out of the window: the wall bounds what its shape costs (a probe
// now and then, and the URLs queued before it was learnt), so that the
// copies of two or three walls learnt in turns (a login page, a print
// view) do not cut off a host whose other pages are distinct. The copies
// that teach a wall count: a host whose pages are copies under shape
// after shape is cut off all the same. The first copy of a page under
// another spelling of its URL (respelling) is left out too: a forum that
// links a topic's page as viewtopic.php?f=3&t=12&start=10 and
// viewtopic.php?t=12&start=10 serves it twice, and such pairs, fetched in a run, cut off a phpBB board with
// 225 of its 270 topics fetched. A page copied under more spellings than
// maxRespelt (a parameter set to a new value in every link, a session's)
// counts.
func (j *Judge) JudgedPage(b *store.Batch, host string, u canon.URL, via, of string) {
	t := j.copies
	size := t.window
	near := of != ""
	if size < 0 || near && (j.budgets.walledShape(u, via) || t.respelling(u, of)) {
		return
	}
	var tripped bool
	var copies int
	t.states.Update(host, func(w store.HostState) store.HostState {
		if w.NearCut {
			return w
		}
		bit := uint64(1) << w.NearNext
		if near {
			w.NearRing |= bit
		} else {
			w.NearRing &^= bit
		}
		w.NearNext = uint8((int(w.NearNext) + 1) % size)
		w.NearPages = uint8(min(int(w.NearPages)+1, size))
		if size < 64 { // a window kept by a run with a wider one
			w.NearRing &= 1<<size - 1
		}
		copies = bits.OnesCount64(w.NearRing)
		if int(w.NearPages) == size && copies > size/2 {
			w.NearCut, tripped = true, true
		}
		return w
	})
	if tripped {
		t.cut(host)
		t.log.Warn("host cut off: most of its last pages were near-duplicates; no new URLs of it are admitted",
			"host", host, "near_duplicates", copies, "of", size)
		b.PutMeta(metaTrapPrefix+host, nil)
	}
}

// maxRespelt is how many copies of one page under other spellings of its
// URL are left out of its host's window: a forum's topic with and without
// its forum's id, and with &start=0.
const maxRespelt = 2

// respelling reports whether u, a copy of the page of, spells of's URL
// with parameters added or dropped (of's query and u's, the one's
// parameters among the other's with the same values), and is one of the
// first maxRespelt such copies of it.
func (t *copies) respelling(u canon.URL, of string) bool {
	path, q, ok := pathQuery(u.Authority, of)
	if !ok || path != u.Path || q == u.Query || !withinQuery(q, u.Query) && !withinQuery(u.Query, q) {
		return false
	}
	var n uint8
	t.respelt.Update(hashKey(fnvString(fnvOffset, of)), func(c uint8) uint8 {
		n = min(c+1, maxRespelt+1)
		return n
	})
	return n <= maxRespelt
}

// withinQuery reports whether every parameter of query a is in query b
// with the same value.
func withinQuery(a, b string) bool {
	for name, value := range canon.Params(a) {
		if v, in := canon.ParamValue(b, name); !in || v != value {
			return false
		}
	}
	return true
}

func (t *copies) cut(host string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.n++
	if len(t.cuts) < maxCutNames {
		t.cuts = append(t.cuts, host)
	}
}

// Cut returns the number of hosts cut off for serving mostly
// near-duplicates, and the first of them.
func (j *Judge) Cut() (int64, []string) {
	t := j.copies
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.n, slices.Clone(t.cuts)
}

// Trapped reports whether host was cut off, reading its state from the
// store if it is not in memory.
func (j *Judge) Trapped(host string) bool { return j.copies.trapped(host) }

func (t *copies) trapped(host string) bool {
	w, ok := t.states.Get(host)
	return ok && w.NearCut
}

// trappedInMemory reports whether host was cut off, as far as the states
// in memory know: for every link found, before the seen set; a URL new to
// the crawl is asked trapped as well.
func (t *copies) trappedInMemory(host string) bool {
	w, ok := t.states.Peek(host)
	return ok && w.NearCut
}

// LoadCuts marks the hosts an earlier run cut off.
func (j *Judge) LoadCuts(db *store.DB) error {
	t := j.copies
	err := db.MetaPrefix(metaTrapPrefix, func(host string, _ []byte) bool {
		t.states.Update(host, func(w store.HostState) store.HostState { w.NearCut = true; return w })
		t.cut(host)
		return true
	})
	if err != nil {
		return fmt.Errorf("judge: read the hosts cut off as traps: %w", err)
	}
	return nil
}
