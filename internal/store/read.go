package store

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/cockroachdb/pebble/v2"
)

// get looks key up and hands its value to fn, which must not keep it.
func (db *DB) get(key []byte, fn func(val []byte) error) (bool, error) {
	if err := db.usable(); err != nil {
		return false, err
	}
	val, closer, err := db.pdb.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("store %s: get %s: %w", db.dir, fmtKey(key), err)
	}
	defer closer.Close()
	if fn != nil {
		if err := fn(val); err != nil {
			return false, fmt.Errorf("store %s: %w", db.dir, err)
		}
	}
	return true, nil
}

// GetHost returns the record of host, and false if there is none.
func (db *DB) GetHost(part uint16, host string) (HostRecord, bool, error) {
	if err := checkHost(host); err != nil {
		return HostRecord{}, false, fmt.Errorf("store %s: %w", db.dir, err)
	}
	key := appendHostKey(nil, part, host)
	var r HostRecord
	ok, err := db.get(key, func(val []byte) (err error) {
		r, err = decodeHostRecord(key, val)
		return err
	})
	return r, ok, err
}

// GetRobots returns the robots.txt record of host for scheme, and false if
// there is none.
func (db *DB) GetRobots(part uint16, host, scheme string) (RobotsRecord, bool, error) {
	if err := checkHost(host); err != nil {
		return RobotsRecord{}, false, fmt.Errorf("store %s: %w", db.dir, err)
	}
	key := appendRobotsKey(nil, part, host, scheme)
	var r RobotsRecord
	ok, err := db.get(key, func(val []byte) (err error) {
		r, err = decodeRobotsRecord(key, val)
		return err
	})
	return r, ok, err
}

// GetURL returns the record of the URL with the given hash, and false if
// there is none.
func (db *DB) GetURL(part uint16, host string, hash [16]byte) (URLRecord, bool, error) {
	if err := checkHost(host); err != nil {
		return URLRecord{}, false, fmt.Errorf("store %s: %w", db.dir, err)
	}
	key := appendURLKey(nil, part, host, hash)
	var r URLRecord
	ok, err := db.get(key, func(val []byte) (err error) {
		r, err = decodeURLRecord(key, val)
		return err
	})
	return r, ok, err
}

// HasURL reports whether the URL with the given hash has a record: the
// exact seen set. It does not decode the record, and the bloom filters let
// it answer most misses without reading an sstable.
func (db *DB) HasURL(part uint16, host string, hash [16]byte) (bool, error) {
	if err := checkHost(host); err != nil {
		return false, fmt.Errorf("store %s: %w", db.dir, err)
	}
	var buf [64]byte
	return db.get(appendURLKey(buf[:0], part, host, hash), nil)
}

// GetMeta returns a copy of the meta value called name, and false if there
// is none.
func (db *DB) GetMeta(name string) ([]byte, bool, error) {
	var v []byte
	ok, err := db.get(appendMetaKey(nil, name), func(val []byte) error {
		v = bytes.Clone(val)
		if v == nil {
			v = []byte{}
		}
		return nil
	})
	return v, ok, err
}

// scan iterates [lower, upper) forward, calling fn for each entry until fn
// returns false or an error.
func (db *DB) scan(what string, lower, upper []byte, fn func(it *pebble.Iterator) (bool, error)) error {
	return db.scanf(func() string { return what }, lower, upper, fn)
}

// scanf is scan with the description made only for an error message.
func (db *DB) scanf(what func() string, lower, upper []byte, fn func(it *pebble.Iterator) (bool, error)) error {
	return db.scanDir(what, lower, upper, false, fn)
}

// scanDir is scanf in key order, or in reverse with back.
func (db *DB) scanDir(what func() string, lower, upper []byte, back bool, fn func(it *pebble.Iterator) (bool, error)) (err error) {
	if err := db.usable(); err != nil {
		return err
	}
	it, err := db.pdb.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return fmt.Errorf("store %s: %s: %w", db.dir, what(), err)
	}
	defer func() {
		if cerr := it.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("store %s: %s: %w", db.dir, what(), cerr)
		}
	}()
	first, next := it.First, it.Next
	if back {
		first, next = it.Last, it.Prev
	}
	for valid := first(); valid; valid = next() {
		more, err := fn(it)
		if err != nil {
			return fmt.Errorf("store %s: %s: %w", db.dir, what(), err)
		}
		if !more {
			return nil
		}
	}
	if err := it.Error(); err != nil {
		return fmt.Errorf("store %s: %s: %w", db.dir, what(), err)
	}
	return nil
}

// last returns the last key in [lower, upper), or nil.
func (db *DB) last(what string, lower, upper []byte) (key []byte, err error) {
	if err := db.usable(); err != nil {
		return nil, err
	}
	it, err := db.pdb.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return nil, fmt.Errorf("store %s: %s: %w", db.dir, what, err)
	}
	if it.Last() {
		key = bytes.Clone(it.Key())
	}
	err = errors.Join(it.Error(), it.Close())
	if err != nil {
		return nil, fmt.Errorf("store %s: %s: %w", db.dir, what, err)
	}
	return key, nil
}

// FrontRange returns the oldest n entries of front queue prio with seq >=
// from, in seq order. Passing the queue's head as from keeps the read from
// walking the tombstones of entries already consumed.
func (db *DB) FrontRange(prio uint8, from uint64, n int) ([]FrontEntry, error) {
	if n <= 0 {
		return nil, nil
	}
	lower := appendFrontKey(nil, prio, from)
	upper := prefixEnd(appendFrontPrefix(nil, prio))
	out := make([]FrontEntry, 0, min(n, 1024))
	err := db.scanf(func() string { return fmt.Sprintf("front range prio=%d from=%d", prio, from) }, lower, upper,
		func(it *pebble.Iterator) (bool, error) {
			_, seq, err := parseFrontKey(it.Key())
			if err != nil {
				return false, err
			}
			val, err := it.ValueAndErr()
			if err != nil {
				return false, fmt.Errorf("read %s: %w", fmtKey(it.Key()), err)
			}
			item, err := decodeFrontItem(it.Key(), val)
			if err != nil {
				return false, err
			}
			out = append(out, FrontEntry{Seq: seq, Item: item})
			return len(out) < n, nil
		})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// LastFrontSeq returns the highest seq in front queue prio, and false if the
// queue is empty.
func (db *DB) LastFrontSeq(prio uint8) (uint64, bool, error) {
	prefix := appendFrontPrefix(nil, prio)
	key, err := db.last(fmt.Sprintf("last front seq prio=%d", prio), prefix, prefixEnd(prefix))
	if err != nil || key == nil {
		return 0, false, err
	}
	_, seq, err := parseFrontKey(key)
	if err != nil {
		return 0, false, fmt.Errorf("store %s: %w", db.dir, err)
	}
	return seq, true, nil
}

// QueueRange returns the first n entries of host's back queue with seq >=
// from, in seq order.
func (db *DB) QueueRange(part uint16, host string, from uint64, n int) ([]QueueEntry, error) {
	if err := checkHost(host); err != nil {
		return nil, fmt.Errorf("store %s: %w", db.dir, err)
	}
	if n <= 0 {
		return nil, nil
	}
	lower := appendQueueKey(nil, part, host, from)
	upper := prefixEnd(appendHostPrefix(nil, tagQueue, part, host))
	out := make([]QueueEntry, 0, min(n, 256))
	err := db.scanf(func() string { return fmt.Sprintf("queue range part=%d host=%q from=%d", part, host, from) }, lower, upper,
		func(it *pebble.Iterator) (bool, error) {
			_, _, seq, err := parseQueueKey(it.Key())
			if err != nil {
				return false, err
			}
			val, err := it.ValueAndErr()
			if err != nil {
				return false, fmt.Errorf("read %s: %w", fmtKey(it.Key()), err)
			}
			item, err := decodeQueueItem(it.Key(), val, part, host)
			if err != nil {
				return false, err
			}
			out = append(out, QueueEntry{Seq: seq, Item: item})
			return len(out) < n, nil
		})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// LastQueueSeq returns the highest seq in host's back queue, and false if
// the queue is empty.
func (db *DB) LastQueueSeq(part uint16, host string) (uint64, bool, error) {
	if err := checkHost(host); err != nil {
		return 0, false, fmt.Errorf("store %s: %w", db.dir, err)
	}
	prefix := appendHostPrefix(nil, tagQueue, part, host)
	key, err := db.last(fmt.Sprintf("last queue seq part=%d host=%q", part, host), prefix, prefixEnd(prefix))
	if err != nil || key == nil {
		return 0, false, err
	}
	_, _, seq, err := parseQueueKey(key)
	if err != nil {
		return 0, false, fmt.Errorf("store %s: %w", db.dir, err)
	}
	return seq, true, nil
}

// QueuedHosts calls fn once for every host with at least one back-queue
// entry, in key order (by partition, then host bytes), until fn returns
// false. It seeks past each host's entries instead of reading them. fn may
// read the store; writes it commits may or may not be seen by the scan.
func (db *DB) QueuedHosts(fn func(part uint16, host string) bool) (err error) {
	if err := db.usable(); err != nil {
		return err
	}
	lower := []byte{tagQueue}
	it, err := db.pdb.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: prefixEnd(lower)})
	if err != nil {
		return fmt.Errorf("store %s: queued hosts: %w", db.dir, err)
	}
	defer func() {
		if cerr := it.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("store %s: queued hosts: %w", db.dir, cerr)
		}
	}()
	var next []byte
	for valid := it.First(); valid; valid = it.SeekGE(next) {
		part, host, _, err := parseQueueKey(it.Key())
		if err != nil {
			return fmt.Errorf("store %s: queued hosts: %w", db.dir, err)
		}
		if !fn(part, host) {
			return nil
		}
		// Q part host 0x01: the first key after every entry of this host.
		next = appendHostPrefix(next[:0], tagQueue, part, host)
		next[len(next)-1]++
	}
	if err := it.Error(); err != nil {
		return fmt.Errorf("store %s: queued hosts: %w", db.dir, err)
	}
	return nil
}

// CountFront counts the entries of front queue prio. It walks them.
func (db *DB) CountFront(prio uint8) (int, error) {
	prefix := appendFrontPrefix(nil, prio)
	n := 0
	err := db.scanf(func() string { return fmt.Sprintf("count front prio=%d", prio) }, prefix, prefixEnd(prefix),
		func(*pebble.Iterator) (bool, error) { n++; return true, nil })
	return n, err
}

// CountQueue counts the entries of host's back queue. It walks them.
func (db *DB) CountQueue(part uint16, host string) (int, error) {
	if err := checkHost(host); err != nil {
		return 0, fmt.Errorf("store %s: %w", db.dir, err)
	}
	prefix := appendHostPrefix(nil, tagQueue, part, host)
	n := 0
	err := db.scanf(func() string { return fmt.Sprintf("count queue part=%d host=%q", part, host) }, prefix, prefixEnd(prefix),
		func(*pebble.Iterator) (bool, error) { n++; return true, nil })
	return n, err
}

// ScanHosts calls fn with every host record of partition part, in host
// order, until fn returns false.
func (db *DB) ScanHosts(part uint16, fn func(HostRecord) bool) error {
	prefix := appendPartPrefix(nil, tagHost, part)
	return db.scanf(func() string { return fmt.Sprintf("scan hosts part=%d", part) }, prefix, prefixEnd(prefix),
		func(it *pebble.Iterator) (bool, error) {
			val, err := it.ValueAndErr()
			if err != nil {
				return false, fmt.Errorf("read %s: %w", fmtKey(it.Key()), err)
			}
			r, err := decodeHostRecord(it.Key(), val)
			if err != nil {
				return false, err
			}
			return fn(r), nil
		})
}

// ScanURLs calls fn with every URL record of partition part, grouped by
// host, until fn returns false.
func (db *DB) ScanURLs(part uint16, fn func(host string, hash [16]byte, r URLRecord) bool) error {
	prefix := appendPartPrefix(nil, tagURL, part)
	return db.scanf(func() string { return fmt.Sprintf("scan urls part=%d", part) }, prefix, prefixEnd(prefix),
		func(it *pebble.Iterator) (bool, error) {
			p, r, err := urlEntry(it)
			if err != nil {
				return false, err
			}
			return fn(p.Host, p.Hash, r), nil
		})
}

// urlEntry decodes the URL table entry under it.
func urlEntry(it *pebble.Iterator) (URLPos, URLRecord, error) {
	hk, err := parseHostKey(it.Key())
	if err != nil {
		return URLPos{}, URLRecord{}, err
	}
	if len(hk.rest) != 16 {
		return URLPos{}, URLRecord{}, fmt.Errorf("key %s is not a url key", fmtKey(it.Key()))
	}
	val, err := it.ValueAndErr()
	if err != nil {
		return URLPos{}, URLRecord{}, fmt.Errorf("read %s: %w", fmtKey(it.Key()), err)
	}
	r, err := decodeURLRecord(it.Key(), val)
	if err != nil {
		return URLPos{}, URLRecord{}, err
	}
	return URLPos{Part: hk.part, Host: hk.host, Hash: [16]byte(hk.rest)}, r, nil
}

// URLPos is a URL record's place in the URL table: partition, host, hash.
type URLPos struct {
	Part uint16
	Host string
	Hash [16]byte
}

// ListURLs returns up to limit URL records in key order (partition, host,
// hash) after the position after (from the start when it is nil): every
// host's, or only host's when it is not empty (part must then be its
// partition); every status, or only status's when it is not zero. It reads
// at most scan records, and returns where it stopped, to go on from, or
// nil when nothing is left.
func (db *DB) ListURLs(host string, part uint16, status URLStatus, after *URLPos, limit, scan int) ([]URLPos, []URLRecord, *URLPos, error) {
	var pos []URLPos
	var recs []URLRecord
	var last *URLPos
	read, ended := 0, true
	err := db.scanURLsAfter(host, part, after, func(p URLPos, r URLRecord) bool {
		if len(recs) >= limit || read >= scan {
			ended = false
			return false
		}
		read++
		last = &p
		if status == 0 || r.Status == status {
			pos, recs = append(pos, p), append(recs, r)
		}
		return true
	})
	if err != nil {
		return nil, nil, nil, err
	}
	if ended {
		last = nil
	}
	return pos, recs, last, nil
}

// scanURLsAfter calls fn with URL records in key order, from the first
// after the position after (from the start when it is nil), until fn
// returns false: every host's, or only host's (see ListURLs).
func (db *DB) scanURLsAfter(host string, part uint16, after *URLPos, fn func(URLPos, URLRecord) bool) error {
	lower, upper := []byte{tagURL}, []byte{tagURL + 1}
	if host != "" {
		if err := checkHost(host); err != nil {
			return fmt.Errorf("store %s: %w", db.dir, err)
		}
		lower = appendHostPrefix(nil, tagURL, part, host)
		upper = prefixEnd(lower)
	}
	if after != nil {
		if err := checkHost(after.Host); err != nil {
			return fmt.Errorf("store %s: %w", db.dir, err)
		}
		if k := append(appendURLKey(nil, after.Part, after.Host, after.Hash), 0); bytes.Compare(k, lower) > 0 {
			lower = k
		}
	}
	if bytes.Compare(lower, upper) >= 0 {
		return nil
	}
	return db.scanf(func() string { return "scan urls after a position" }, lower, upper,
		func(it *pebble.Iterator) (bool, error) {
			p, r, err := urlEntry(it)
			if err != nil {
				return false, err
			}
			return fn(p, r), nil
		})
}
