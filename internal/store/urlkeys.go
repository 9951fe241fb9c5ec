package store

import (
	"fmt"

	"github.com/cockroachdb/pebble/v2"
)

// URLKeys calls fn with the partition, host and hash of every URL record, in
// key order, until fn returns false. It reads keys only, never values: it is
// how a restarted crawl rebuilds its seen set's Bloom filters.
func (db *DB) URLKeys(fn func(part uint16, host string, hash [16]byte) bool) error {
	lower := []byte{tagURL}
	return db.scan("url keys", lower, prefixEnd(lower), func(it *pebble.Iterator) (bool, error) {
		hk, err := parseHostKey(it.Key())
		if err != nil {
			return false, err
		}
		if hk.tag != tagURL || len(hk.rest) != 16 {
			return false, fmt.Errorf("store: key %s is not a URL key", fmtKey(it.Key()))
		}
		var h [16]byte
		copy(h[:], hk.rest)
		return fn(hk.part, hk.host, h), nil
	})
}

// MetaPrefix calls fn with the name (without the prefix) and value of every
// meta entry whose name starts with prefix, in name order, until fn returns
// false.
func (db *DB) MetaPrefix(prefix string, fn func(name string, value []byte) bool) error {
	lower := appendMetaKey(nil, prefix)
	return db.scan("meta "+prefix, lower, prefixEnd(lower), func(it *pebble.Iterator) (bool, error) {
		name := string(it.Key()[len(lower):])
		return fn(name, append([]byte(nil), it.Value()...)), nil
	})
}
