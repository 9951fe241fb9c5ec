package store

import (
	"path/filepath"
	"sync"
	"testing"

	"github.com/cockroachdb/pebble/v2"
)

// countEntries walks the queues.
func countEntries(t *testing.T, db *DB) int64 {
	t.Helper()
	var n int64
	for _, tag := range []byte{tagFront, tagQueue} {
		if err := db.scan("test count", []byte{tag}, []byte{tag + 1}, func(*pebble.Iterator) (bool, error) { n++; return true, nil }); err != nil {
			t.Fatal(err)
		}
	}
	return n
}

// TestQueueCount: the count kept in the metadata follows the queues
// through pushes, moves to a host's tail and deletions, from concurrent
// batches merged by the group commit, and is what a reopened store reads.
// A state without one (written before it was kept) is counted when opened.
func TestQueueCount(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	db, err := Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	// 8 writers, each: 50 batches of 10 new front entries; then moves 200
	// of its entries to a tail (push the tail, delete the front) and
	// deletes 150 of those tails and 100 front entries.
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			host := "w" + string(rune('a'+w)) + ".test"
			seq := func(i int) uint64 { return uint64(w*1_000_000 + i) }
			for b := range 50 {
				bt := db.NewBatch()
				for i := b * 10; i < b*10+10; i++ {
					bt.PushFront(0, seq(i), item(host, 3, i))
				}
				if err := bt.Commit(false); err != nil {
					t.Error(err)
					return
				}
			}
			for i := range 200 {
				bt := db.NewBatch()
				bt.PushQueue(3, host, seq(i), item(host, 3, i))
				bt.DeleteFront(0, seq(i))
				if i < 150 {
					bt.DeleteQueue(3, host, seq(i))
				}
				if err := bt.Commit(false); err != nil {
					t.Error(err)
					return
				}
			}
			bt := db.NewBatch()
			for i := 200; i < 300; i++ {
				bt.DeleteFront(0, seq(i))
			}
			bt.PutMeta("unrelated", []byte("x")) // a batch's other writes leave the count alone
			if err := bt.Commit(true); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	const want = 8 * (500 - 150 - 100)
	if got, walked := db.Queued(), countEntries(t, db); got != want || walked != want {
		t.Fatalf("queue count %d, %d entries walked; want %d", got, walked, want)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	db, err = Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := db.Queued(); got != want {
		t.Fatalf("reopened: queue count %d, want %d", got, want)
	}
	// A state without the count: counted at open, and kept from then on.
	b := db.NewBatch()
	b.DeleteMeta(metaQueued)
	if err := b.Commit(true); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err = Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if got := db.Queued(); got != want {
		t.Fatalf("state without a count: counted %d, want %d", got, want)
	}
	if _, found, err := db.GetMeta(metaQueued); !found || err != nil {
		t.Fatalf("the count was not written back (%v)", err)
	}
}
