package judge

import (
	"fmt"
	"log/slog"
	"math/bits"
	"slices"
	"strings"
	"sync"

	"github.com/weft-crawler/weft/internal/canon"
	"github.com/weft-crawler/weft/internal/hostmap"
	"github.com/weft-crawler/weft/internal/store"
)

// metaTrapPrefix + host marks a host cut off, and metaTrapPrefix + host +
// a directory's line (cutdirs.go) a directory of it, so that a resumed
// crawl keeps them so.
const metaTrapPrefix = "trap/"

// copies cuts off the hosts, or the directories of hosts, that serve
// mostly near-duplicates: it keeps a window of each host's last judged
// pages, and what of the host is cut off, in the crawl's per-host states
// (store.HostState's Near fields), which are bounded by the host cache
// and kept in the store; a cut is also recorded in the page's batch, so
// that it holds after a crash. It is safe for concurrent use.
type copies struct {
	window  int                           // pages judged per window; negative: no cut-off
	states  *hostmap.Map[store.HostState] // the crawl's per-host states
	respelt *hostmap.Map[uint8]           // by the hash of a page's URL: its copies under another spelling (respelling)
	log     *slog.Logger

	mu   sync.Mutex
	n    int64    // hosts and directories cut off
	cuts []string // the first of them, for the summary ("a.test", "a.test/day/")
}

// maxCutNames is how many hosts and directories cut off are named.
const maxCutNames = 20

// JudgedPage adds the page u of host (linked from via), judged for
// near-duplicates (of: the earlier page it copies, "" for none), to the
// host's window, and when most of a full window were near-duplicates,
// cuts off (in b, for a restart) the directory they are all under, as
// deep as the deepest of them (cutdirs.go): no new URL in it is admitted
// from then on, and one queued is dropped when leased (Learnt). A shop
// that walked one category's filters,
// /c/hats/color-green/size-38/material-wool/ and the rest, depth first,
// had its whole host cut off, so that the products on its other
// categories' second pages, found after, were never asked for (68 of
// 100). The host itself is cut off, as it was before (no new URL of it
// admitted, those queued still fetched), when its copies are all over it
// (their directory is "/", and no token is where they all had one), when
// it had maxCutDirs cuts already, when a directory's copies cut it off
// again (a directory cut for its tokens' copies may be cut once more,
// whole: cuts.has), or when where they are is unknown (a window kept by
// an older build). A page in a
// directory cut off (queued before the cut) is left out of the window:
// the cut bounds what the directory costs.
//
// A copy whose shape, or variant shape, is a wall of copies already
// (walls.go) is left out of the window too: the wall bounds what its
// shape costs (a probe now and then, and the URLs queued before it was
// learnt), so that the copies of two or three walls learnt in turns (a
// login page, a print view) do not cut off a host whose other pages are
// distinct. The copies that teach a wall count: a host whose pages are
// copies under shape after shape is cut off all the same. The first copy
// of a page under another spelling of its URL (respelling) is left out
// too: a forum that links a topic's page as
// viewtopic.php?f=3&t=12&start=10 and viewtopic.php?t=12&start=10 serves
// it twice, and such pairs, fetched in a run, cut off a phpBB board with
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
	var cut dirCut // the directory cut off, none for the host
	t.states.Update(host, func(w store.HostState) store.HostState {
		if w.NearCut {
			return w
		}
		d := parseNearDirs(w.NearDirs)
		if d.cuts.refuse(u) {
			return w
		}
		was := d
		if near {
			d.copy(u)
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
		if w.NearNext == 0 { // a round of the window is over
			d.prev, d.cur = d.cur, dirCut{}
		}
		copies = bits.OnesCount64(w.NearRing)
		if copies == 0 {
			d.cur, d.prev = dirCut{}, dirCut{}
		}
		if int(w.NearPages) == size && copies > size/2 {
			tripped = true
			if cut = d.under().asCut(); cut.dir == "" || cut.dir == "/" && cut.token == 0 || d.cuts.len() >= maxCutDirs || d.cuts.has(cut) {
				w.NearCut, cut = true, dirCut{}
			} else {
				d.cuts = d.cuts.with(cut)
				d.cur, d.prev = dirCut{}, dirCut{}
				w.NearRing, w.NearPages, w.NearNext = 0, 0, 0
			}
		}
		if d != was {
			w.NearDirs = d.String()
		}
		return w
	})
	if !tripped {
		return
	}
	t.cut(host + cut.name())
	if cut.dir == "" {
		t.log.Warn("host cut off: most of its last pages were near-duplicates; no new URLs of it are admitted",
			"host", host, "near_duplicates", copies, "of", size)
		b.PutMeta(metaTrapPrefix+host, nil)
		return
	}
	t.log.Warn("directory cut off: most of its host's last pages were near-duplicates under it; no new URLs under it are admitted",
		"host", host, "directory", cut.dir, "depth", cut.depth, "token_segment", cut.token, "near_duplicates", copies, "of", size)
	b.PutMeta(metaTrapPrefix+host+cut.line(), nil)
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

// Cut returns the number of hosts and directories cut off for serving
// mostly near-duplicates, and the first of them (a directory after its
// host: "a.test/c/hats/color-green/", and where its token is:
// "git.test/alice/app/ token@5").
func (j *Judge) Cut() (int64, []string) {
	t := j.copies
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.n, slices.Clone(t.cuts)
}

// Trapped reports whether u's host, or the part of it u is in, was cut
// off, reading the host's state from the store if it is not in memory.
func (j *Judge) Trapped(u canon.URL) bool { return j.copies.trapped(u) }

func (t *copies) trapped(u canon.URL) bool {
	w, ok := t.states.Get(u.Authority)
	return ok && (w.NearCut || inCut(w, u))
}

// trappedInMemory is trapped as far as the states in memory know: for
// every link found, before the seen set; a URL new to the crawl is asked
// trapped as well.
func (t *copies) trappedInMemory(u canon.URL) bool {
	w, ok := t.states.Peek(u.Authority)
	return ok && (w.NearCut || inCut(w, u))
}

// inCutDir reports whether u is in a directory of its host cut off, as
// far as the states in memory know (a host cut off whole lets what it
// queued be fetched).
func (t *copies) inCutDir(u canon.URL) bool {
	w, ok := t.states.Peek(u.Authority)
	return ok && inCut(w, u)
}

// inCut reports whether u is in a directory cut off of the host of state
// w.
func inCut(w store.HostState, u canon.URL) bool {
	return w.NearDirs != "" && parseNearDirs(w.NearDirs).cuts.refuse(u)
}

// LoadCuts marks the hosts and directories an earlier run cut off (the
// state of a host kept in the store knows its directories already; the
// page's batch that cut one off may be all that a crash left, and its
// window, full of the copies that cut it, then starts again).
func (j *Judge) LoadCuts(db *store.DB) error {
	t := j.copies
	err := db.MetaPrefix(metaTrapPrefix, func(key string, _ []byte) bool {
		host, rest, _ := strings.Cut(key, "/")
		t.states.Update(host, func(w store.HostState) store.HostState {
			if rest == "" {
				w.NearCut = true
				return w
			}
			d := parseNearDirs(w.NearDirs)
			if c := parseDirCut("/" + rest); !d.cuts.has(c) {
				d.cuts = d.cuts.with(c)
				d.cur, d.prev = dirCut{}, dirCut{}
				w.NearRing, w.NearPages, w.NearNext = 0, 0, 0
				w.NearDirs = d.String()
			}
			return w
		})
		t.cut(host + parseDirCut("/"+rest).name())
		return true
	})
	if err != nil {
		return fmt.Errorf("judge: read the hosts cut off as traps: %w", err)
	}
	return nil
}
