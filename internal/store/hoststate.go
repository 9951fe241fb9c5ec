package store

import (
	"encoding/binary"
	"fmt"
)

// The host state table: what the crawl keeps of a host besides its clock
// (the host record, rewritten by the frontier after every request), so
// that a host the crawl's bounded per-host cache evicted, or one of an
// earlier run, starts from its counts rather than from zero.
//
//	HostState: 'T' part host 0x00 -> HostState
const (
	tagHostState     = 'T'
	hostStateVersion = 5 // 2 adds the near-duplicate window and the index alias bits, 4 its directories (3's, of a build that never shipped, are dropped), 5 a directory's token segment
)

// HostState is a host's per-host counters, and what the crawl's per-host
// rules have learnt of it.
type HostState struct {
	Accepted     int64 // URLs accepted for the host (the per-host cap)
	Throttled    int64 // 429 answers
	ServerErrors int64 // 5xx answers
	LinksCut     int64 // pages cut at the per-page link cap
	// The near-duplicate trap's window of the host's last judged pages:
	// one bit a page, set for a near-duplicate, NearPages of them, the
	// next at bit NearNext; NearCut, the host cut off.
	NearRing            uint64
	NearPages, NearNext uint8
	NearCut             bool
	// NearDirs is what the window knows of where the host's copies are,
	// and the directories of the host cut off for them, in package
	// judge's lines (cutdirs.go); "" for none.
	NearDirs string
	// The index alias rule's pairs of a directory and its index file: a
	// bit per scheme and index file name (the crawl's), set for a pair
	// served alike (AliasSame) or differently (AliasDiffer).
	AliasSame, AliasDiffer uint8
}

func appendHostStateKey(dst []byte, part uint16, host string) []byte {
	return appendHostPrefix(dst, tagHostState, part, host)
}

// PutHostState writes the state record of host.
func (b *Batch) PutHostState(part uint16, host string, r HostState) {
	if !b.ok() {
		return
	}
	if err := checkHost(host); err != nil {
		b.fail(err)
		return
	}
	b.key = appendHostStateKey(b.key[:0], part, host)
	b.val = append(b.val[:0], hostStateVersion)
	for _, v := range [...]int64{r.Accepted, r.Throttled, r.ServerErrors, r.LinksCut} {
		b.val = binary.AppendVarint(b.val, v)
	}
	cut := byte(0)
	if r.NearCut {
		cut = 1
	}
	b.val = binary.AppendUvarint(b.val, r.NearRing)
	b.val = append(b.val, r.NearPages, r.NearNext, cut, r.AliasSame, r.AliasDiffer)
	b.val = appendString(b.val, r.NearDirs)
	b.set(b.key, b.val)
}

// GetHostState returns the state record of host, and false if there is
// none.
func (db *DB) GetHostState(part uint16, host string) (HostState, bool, error) {
	if err := checkHost(host); err != nil {
		return HostState{}, false, fmt.Errorf("store %s: %w", db.dir, err)
	}
	key := appendHostStateKey(nil, part, host)
	var r HostState
	ok, err := db.get(key, func(val []byte) error {
		d := decoder{b: val}
		v := d.version(hostStateVersion)
		r.Accepted = d.varint("accepted")
		r.Throttled = d.varint("throttled")
		r.ServerErrors = d.varint("server errors")
		r.LinksCut = d.varint("links cut")
		if v >= 2 {
			r.NearRing = d.uvarint("near-duplicate window")
			r.NearPages = d.byte1("near-duplicate window pages")
			r.NearNext = d.byte1("near-duplicate window next")
			switch d.byte1("cut off") {
			case 0:
			case 1:
				r.NearCut = true
			default:
				d.fail("cut off")
			}
			r.AliasSame = d.byte1("index alias pairs alike")
			r.AliasDiffer = d.byte1("index alias pairs differing")
		}
		switch {
		case v >= 4:
			r.NearDirs = d.str("near-duplicate directories")
		case v == 3:
			d.str("near-duplicate directories") // another layout: the cuts come back from the crawl's meta
		}
		return d.finish(key)
	})
	return r, ok, err
}
