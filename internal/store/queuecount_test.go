package store

import (
	"context"
	"encoding/binary"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/weft-crawler/weft/internal/testwait"
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
	if got, ok := db.Queued(); !ok || got != want || countEntries(t, db) != want {
		t.Fatalf("queue count %d (known %v), %d entries walked; want %d", got, ok, countEntries(t, db), want)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	db, err = Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := db.Queued(); !ok || got != want {
		t.Fatalf("reopened: queue count %d (known %v), want %d", got, ok, want)
	}
	// A state without the count (written before it was kept): counted
	// when opened, here in the background as a large one is.
	b := db.NewBatch()
	b.DeleteMeta(metaQueued)
	if err := b.Commit(true); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err = Open(dir, &Options{SyncCountLimit: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// It is counted in the background, while batches go on changing the
	// queues: the walk of the state at the open and their changes add up.
	for i := range 30 {
		b := db.NewBatch()
		b.PushFront(1, uint64(9_000_000+i), item("late.test", 3, i))
		if i%3 == 0 {
			b.DeleteFront(1, uint64(9_000_000+i))
		}
		if err := b.Commit(false); err != nil {
			t.Fatal(err)
		}
	}
	const after = want + 20
	testwait.Eventually(t, time.Minute, "the state without a count to be counted", func() bool { _, ok := db.Queued(); return ok })
	if got, _ := db.Queued(); got != after || countEntries(t, db) != after {
		t.Fatalf("state without a count: counted %d, %d entries walked; want %d", got, countEntries(t, db), after)
	}
	if v, found, err := db.GetMeta(metaQueued); !found || err != nil {
		t.Fatalf("the count was not written back (%v)", err)
	} else if n, _ := binary.Varint(v); n != after {
		t.Fatalf("the count written back is %d, want %d", n, after)
	}
}

// TestQueueCountClosedWhileCounting: a store closed while it counts a
// state without a count stops the walk and leaves the state uncounted,
// to be counted at the next open.
func TestQueueCountClosedWhileCounting(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	db, err := Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	b := db.NewBatch()
	for i := range 1000 {
		b.PushFront(0, uint64(i), item("a.test", 3, i))
	}
	if err := b.Commit(true); err != nil {
		t.Fatal(err)
	}
	b = db.NewBatch()
	b.DeleteMeta(metaQueued)
	if err := b.Commit(true); err != nil {
		t.Fatal(err)
	}
	db.Close()
	// Closed while its walk runs: the walk stops (goleak says so) and
	// leaves no count behind.
	walking := make(chan struct{})
	db, err = Open(dir, &Options{SyncCountLimit: -1, countWalk: func(ctx context.Context) {
		close(walking)
		<-ctx.Done()
	}})
	if err != nil {
		t.Fatal(err)
	}
	<-walking
	if _, ok := db.Queued(); ok {
		t.Fatal("a count while the walk runs")
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	// The walk Close stopped wrote no count: the next open counts again.
	db, err = Open(dir, &Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, found, err := db.GetMeta(metaQueued); err != nil || found {
		t.Fatalf("a count written by a walk stopped by Close (found %v, err %v)", found, err)
	}
	db.Close()
	db, err = Open(dir, &Options{SyncCountLimit: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { db.Close() }() // the last one opened
	testwait.Eventually(t, time.Minute, "the count", func() bool { n, ok := db.Queued(); return ok && n == 1000 })
	// A small state is counted by the open itself.
	b = db.NewBatch()
	b.DeleteMeta(metaQueued)
	if err := b.Commit(true); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if db, err = Open(dir, nil); err != nil {
		t.Fatal(err)
	}
	if n, ok := db.Queued(); !ok || n != 1000 {
		t.Errorf("a small state without a count: %d (known %v) at the open, want 1000", n, ok)
	}
}
