package store

import (
	"math"
	"sync"
	"time"
)

// The recrawl index's floors. A continuous crawl deletes an entry of the
// index each time it queues a URL again or visits it, and writes the next
// one later in the index; so the head of each partition's range is deleted
// entries, more of them the longer the crawl runs. Pebble keeps those as
// tombstones until a compaction drops them (in the memtable, until it is
// flushed), and an iterator steps over every one: a scan that started at
// the head of the partition read the whole of the crawl's past each time,
// 40 % of a test crawl's CPU at a scan every 20 ms.
//
// So the DB keeps, per partition and in memory, a floor: a due time before
// which the partition holds no entry. A scan from the partition's head
// starts at the floor and raises it to the first entry it finds (past every
// tombstone before it), or above everything when it finds none; a
// partition whose floor is after until is not read at all. A commit that
// puts an entry lowers the floor of its partition to the entry's time,
// after the entry is visible, and counts a generation; a scan raises the
// floor only if no commit counted one in its partition since it read it.
// So a scan that did not see an entry (committed after its iterator was
// made) never raises the floor past it, and a floor never hides an entry.
// The floors start at zero when the DB opens.

// dueFloors holds the floors. It is safe for concurrent use.
type dueFloors struct {
	mu sync.Mutex
	m  map[uint16]dueFloor
}

// dueFloor is a partition's floor: no entry of the partition is due
// before at (Unix nanoseconds, as in the key); gen counts the commits that
// lowered it.
type dueFloor struct {
	at, gen uint64
}

// noDue is the floor of a partition with no entry.
const noDue = math.MaxUint64

// get returns the floor of part and its generation.
func (f *dueFloors) get(part uint16) dueFloor {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.m[part]
}

// lower says an entry of part due at at is committed.
func (f *dueFloors) lower(part uint16, at uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.m == nil {
		f.m = map[uint16]dueFloor{}
	}
	d := f.m[part]
	f.m[part] = dueFloor{at: min(d.at, at), gen: d.gen + 1}
}

// raise sets the floor of part to at, if no commit lowered it since a
// scan read it as was.
func (f *dueFloors) raise(part uint16, was dueFloor, at uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	d := f.m[part]
	if d.gen != was.gen || at <= d.at {
		return
	}
	if f.m == nil {
		f.m = map[uint16]dueFloor{}
	}
	f.m[part] = dueFloor{at: at, gen: d.gen}
}

// DueFloor returns the floor of partition part of the recrawl index: no
// entry of it is due before at. known is false until a scan from the
// partition's head has read it (or only entries due at the zero time are
// known); none says it has no entry at all.
func (db *DB) DueFloor(part uint16) (at time.Time, known, none bool) {
	f := db.floors.get(part)
	switch f.at {
	case 0:
		return time.Time{}, false, false
	case noDue:
		return time.Time{}, true, true
	}
	return time.Unix(0, int64(f.at)), true, false
}

// dueLow is the earliest entry a batch puts in a partition.
type dueLow struct {
	part uint16
	at   uint64
}

// putDueLow records, in lows, an entry of part due at at.
func putDueLow(lows []dueLow, part uint16, at uint64) []dueLow {
	for i := range lows {
		if lows[i].part == part {
			lows[i].at = min(lows[i].at, at)
			return lows
		}
	}
	return append(lows, dueLow{part, at})
}
