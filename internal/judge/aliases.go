package judge

import (
	"crypto/sha1"
	"fmt"
	"log/slog"
	"strings"

	"github.com/weft-crawler/weft/internal/canon"
	"github.com/weft-crawler/weft/internal/hostmap"
	"github.com/weft-crawler/weft/internal/seen"
	"github.com/weft-crawler/weft/internal/store"
)

// Captures reads the capture index: fn is called with each capture of
// the URL whose SURT is key, newest first, until it returns false.
// *store.DB is one.
type Captures interface {
	CapturesNewestFirst(key string, fn func(store.CaptureRecord) bool) error
}

// Unseen tells a URL the crawl never met: *seen.Set is one. Only a URL
// it met can have been captured, so the capture index is not read for
// the others (most twins: an index file is seldom linked).
type Unseen interface {
	Unseen(host string, k seen.Key) bool
}

// indexNames are the index files a static server answers a directory
// with. The rule is narrow on purpose: a name is learnt per origin, and
// only these two exact names, without a query, are ever skipped.
var indexNames = [...]string{"index.html", "index.htm"}

// aliases learns, per origin, whether a directory and its index file
// serve one page, from the captures of both, and says which links to an
// index file would fetch a copy. It is safe for concurrent use.
type aliases struct {
	states   *hostmap.Map[store.HostState] // the crawl's per-host states, by authority (Alias fields)
	captures Captures
	unseen   Unseen // nil: every URL's captures are read
	canon    *canon.Canonicalizer
	log      *slog.Logger
}

// aliasState is what an origin's pairs of a directory and its index file
// have shown, one bit per indexNames entry: same, a pair of whole 200
// answers with one payload; differ, a pair whose payloads differed. The
// rule holds for a name with same set and differ clear, and a differing
// pair ends it for good.
type aliasState struct{ same, differ uint8 }

func (a aliasState) holds(i int) bool { return a.same&(1<<i) != 0 && a.differ&(1<<i) == 0 }

// aliasShift is where an origin's aliasState bits start in its host's
// store.HostState (AliasSame, AliasDiffer); ok false for a scheme the rule
// does not learn.
func aliasShift(scheme string) (shift uint, ok bool) {
	switch scheme {
	case "http":
		return 0, true
	case "https":
		return uint(len(indexNames)), true
	}
	return 0, false
}

// aliasOf returns the aliasState of scheme's origin in its host's state.
func aliasOf(s store.HostState, shift uint) aliasState {
	const mask = 1<<len(indexNames) - 1
	return aliasState{same: s.AliasSame >> shift & mask, differ: s.AliasDiffer >> shift & mask}
}

// state returns the aliasState of scheme://authority, and false for a
// scheme the rule does not learn.
func (x *aliases) state(scheme, authority string) (aliasState, uint, bool) {
	shift, ok := aliasShift(scheme)
	if !ok {
		return aliasState{}, 0, false
	}
	s, _ := x.states.Get(authority)
	return aliasOf(s, shift), shift, true
}

// splitIndex returns the directory of path (ending in "/") and which of
// indexNames it names, or ok false.
func splitIndex(path string) (dir string, name int, ok bool) {
	for i, n := range indexNames {
		if strings.HasSuffix(path, "/"+n) {
			return path[:len(path)-len(n)], i, true
		}
	}
	return "", 0, false
}

// LearnAlias compares a page that is a directory (X/) or one of its
// index files (X/index.html), fetched now with a whole 200 answer whose
// payload's digest is digest, with its twin's last 200 capture, and
// records in its origin's state whether the two served the same payload.
// Only the origin's own captures count: a redirect's target is its own
// URL, so a redirect never makes a pair.
func (j *Judge) LearnAlias(u canon.URL, digest [sha1.Size]byte) error {
	x := j.aliases
	if u.Query != "" {
		return nil
	}
	st, shift, ok := x.state(u.Scheme, u.Authority)
	if !ok {
		return nil
	}
	var twins [len(indexNames)]string // by name; "" where there is nothing to learn
	if dir, i, ok := splitIndex(u.Path); ok {
		if st.differ&(1<<i) == 0 {
			twins[i] = dir
		}
	} else if strings.HasSuffix(u.Path, "/") {
		for i, n := range indexNames {
			if st.differ&(1<<i) == 0 {
				twins[i] = u.Path + n
			}
		}
	} else {
		return nil
	}
	for i, path := range twins {
		if path == "" {
			continue
		}
		last, ok, err := x.last200(u.Scheme + "://" + u.Authority + path)
		if err != nil {
			return fmt.Errorf("judge: read the captures of the twin of %s: %w", u.String, err)
		}
		if !ok {
			continue
		}
		same := last == digest
		x.states.Update(u.Authority, func(s store.HostState) store.HostState {
			if same {
				s.AliasSame |= 1 << (shift + uint(i))
			} else {
				s.AliasDiffer |= 1 << (shift + uint(i))
			}
			return s
		})
		if !same && st.holds(i) {
			x.log.Info("a directory and its index file differ: links to index files are followed again", "host", u.Authority, "url", u.String, "twin", path)
		}
	}
	return nil
}

// last200 returns the payload digest of rawURL's last capture that
// answered 200, from the capture index.
func (x *aliases) last200(rawURL string) (digest [sha1.Size]byte, ok bool, err error) {
	t, err := x.canon.Parse(rawURL)
	if err != nil {
		return digest, false, nil
	}
	if x.unseen != nil && x.unseen.Unseen(t.Authority, seen.KeyOf(t.String)) {
		return digest, false, nil
	}
	err = x.captures.CapturesNewestFirst(t.SURT(), func(r store.CaptureRecord) bool {
		if r.Status == 200 {
			digest, ok = r.Digest, true
		}
		return !ok
	})
	return digest, ok, err
}

// skip reports whether u, a link found on the page at page, is an index
// file whose directory was fetched with a whole 200 answer (that page, or
// an earlier capture), on an origin whose pairs have so far always served
// the two alike: the request would fetch a copy.
func (x *aliases) skip(page string, u canon.URL) bool {
	if u.Query != "" {
		return false
	}
	dir, i, ok := splitIndex(u.Path)
	if !ok {
		return false
	}
	if st, _, ok := x.state(u.Scheme, u.Authority); !ok || !st.holds(i) {
		return false
	}
	twin := u.Scheme + "://" + u.Authority + dir
	if page == twin {
		return true
	}
	_, fetched, err := x.last200(twin)
	return err == nil && fetched
}
