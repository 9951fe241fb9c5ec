package store

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// The recrawl index (continuous mode): one entry per fetched URL, keyed by
// the time it may be fetched again, so that finding the URLs due reads
// only those, not every URL record.
//
//	Next:  'N' part due[8] host 0x00 hash[16]        -> DueEntry's ranking fields
//
// due is Unix nanoseconds as a big-endian uint64 (the zero time is 0), so a
// partition's entries are in due order. The value carries what ranks the
// URL among those due, so that ranking reads no URL record.
const (
	tagDue     = 'N'
	dueVersion = 3 // 2 adds Unchanged, 3 Dating
)

// DueEntry is a URL's entry in the recrawl index.
type DueEntry struct {
	Part uint16
	Due  time.Time // when it may be fetched again
	Host string
	Hash [16]byte
	// What ranks it: its change history and its importance when it was
	// scheduled.
	LastFetch             time.Time
	Visits, Changes, Span float64
	Importance            float64
	Unchanged             int // visits in a row that found no change (version 2; 0 in an older entry)
	Dating                    // what its Last-Modified dates taught (version 3; zero in an older entry)
}

func dueNanos(t time.Time) uint64 {
	if t.IsZero() || t.UnixNano() < 0 {
		return 0
	}
	return uint64(t.UnixNano())
}

func appendDuePrefix(dst []byte, part uint16, due time.Time) []byte {
	return appendDueNanosPrefix(dst, part, dueNanos(due))
}

func appendDueNanosPrefix(dst []byte, part uint16, due uint64) []byte {
	dst = appendPartPrefix(dst, tagDue, part)
	return binary.BigEndian.AppendUint64(dst, due)
}

func appendDueKey(dst []byte, e *DueEntry) []byte {
	dst = appendDuePrefix(dst, e.Part, e.Due)
	dst = append(dst, e.Host...)
	dst = append(dst, hostEnd)
	return append(dst, e.Hash[:]...)
}

// parseDueKey fills e's key fields from k.
func parseDueKey(k []byte, e *DueEntry) error {
	if len(k) < 1+2+8+1+1+16 || k[0] != tagDue || k[len(k)-17] != hostEnd {
		return fmt.Errorf("key %x is not a recrawl index key", k)
	}
	e.Part = binary.BigEndian.Uint16(k[1:3])
	if n := binary.BigEndian.Uint64(k[3:11]); n != 0 {
		e.Due = time.Unix(0, int64(n))
	} else {
		e.Due = time.Time{}
	}
	host := k[11 : len(k)-17]
	if len(host) == 0 || bytes.IndexByte(host, hostEnd) >= 0 {
		return fmt.Errorf("key %x has a bad host", k)
	}
	e.Host = string(host)
	e.Hash = [16]byte(k[len(k)-16:])
	return nil
}

func appendDueValue(dst []byte, e *DueEntry) []byte {
	dst = append(dst, dueVersion)
	dst = appendTime(dst, e.LastFetch)
	for _, f := range [...]float64{e.Visits, e.Changes, e.Span, e.Importance} {
		dst = binary.BigEndian.AppendUint64(dst, math.Float64bits(f))
	}
	dst = binary.AppendUvarint(dst, uint64(max(e.Unchanged, 0)))
	return appendDating(dst, &e.Dating)
}

func decodeDueEntry(key, val []byte) (DueEntry, error) {
	var e DueEntry
	if err := parseDueKey(key, &e); err != nil {
		return DueEntry{}, err
	}
	d := decoder{b: val}
	v := d.version(dueVersion)
	e.LastFetch = d.time("last fetch")
	for _, f := range []*float64{&e.Visits, &e.Changes, &e.Span, &e.Importance} {
		if d.err == nil && len(d.b)-d.off >= 8 {
			*f = math.Float64frombits(binary.BigEndian.Uint64(d.b[d.off:]))
			d.off += 8
		} else {
			d.fail("ranking")
		}
	}
	if v >= 2 {
		e.Unchanged = int(min(d.uvarint("unchanged"), math.MaxInt32))
	}
	if v >= 3 {
		e.Dating = d.dating()
	}
	if err := d.finish(key); err != nil {
		return DueEntry{}, err
	}
	return e, nil
}

// PutDue writes e to the recrawl index.
func (b *Batch) PutDue(e DueEntry) {
	if !b.ok() {
		return
	}
	if err := checkHost(e.Host); err != nil {
		b.fail(err)
		return
	}
	b.key = appendDueKey(b.key[:0], &e)
	b.val = appendDueValue(b.val[:0], &e)
	b.set(b.key, b.val)
	b.dueLows = putDueLow(b.dueLows, e.Part, dueNanos(e.Due))
}

// DeleteDue removes the recrawl index entry of the URL (part, host, hash)
// due at due.
func (b *Batch) DeleteDue(part uint16, due time.Time, host string, hash [16]byte) {
	if !b.ok() {
		return
	}
	if err := checkHost(host); err != nil {
		b.fail(err)
		return
	}
	b.key = appendDueKey(b.key[:0], &DueEntry{Part: part, Due: due, Host: host, Hash: hash})
	b.del(b.key)
}

// ClearDue removes every entry of the recrawl index.
func (b *Batch) ClearDue() {
	if !b.ok() {
		return
	}
	start := []byte{tagDue}
	if err := b.pb.DeleteRange(start, prefixEnd(start), nil); err != nil {
		b.fail(err)
	}
}

// ScanDue calls fn with the recrawl index entries of partition part due at
// or before until, in due order, starting after the entry after (or at the
// first, when after is nil), until fn returns false. Every scan starts at
// the partition's floor (duefloor.go), and one from the head raises it.
func (db *DB) ScanDue(part uint16, after *DueEntry, until time.Time, fn func(DueEntry) bool) error {
	floor := db.floors.get(part)
	end := dueNanos(until)
	if floor.at > end {
		return nil // nothing due by until
	}
	lower := appendDueNanosPrefix(nil, part, floor.at)
	if after != nil {
		if k := append(appendDueKey(nil, after), 0); bytes.Compare(k, lower) > 0 { // the least key above after's
			lower = k
		}
	}
	// From the head, the scan reads on to the first entry after until, so
	// that the floor rises to it; from after, it stops at until.
	upper := prefixEnd(appendPartPrefix(nil, tagDue, part))
	if after != nil {
		upper = appendDueNanosPrefix(nil, part, end+1)
		if bytes.Compare(lower, upper) >= 0 {
			return nil
		}
	}
	first, seen := uint64(noDue), false
	err := db.scanf(func() string { return fmt.Sprintf("scan recrawl index part=%d", part) }, lower, upper,
		func(it *pebble.Iterator) (bool, error) {
			k := it.Key()
			if len(k) < 11 {
				return false, fmt.Errorf("key %x is not a recrawl index key", k)
			}
			at := binary.BigEndian.Uint64(k[3:11])
			if !seen {
				first, seen = at, true
			}
			if at > end {
				return false, nil
			}
			val, err := it.ValueAndErr()
			if err != nil {
				return false, fmt.Errorf("read %s: %w", fmtKey(k), err)
			}
			e, err := decodeDueEntry(k, val)
			if err != nil {
				return false, err
			}
			return fn(e), nil
		})
	if err == nil && after == nil {
		db.floors.raise(part, floor, first)
	}
	return err
}
