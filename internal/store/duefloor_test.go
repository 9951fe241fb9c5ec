package store

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// dueAt is an entry of partition part due at t0 plus s seconds.
func dueAt(part uint16, s int) DueEntry {
	return DueEntry{Part: part, Due: t0.Add(time.Duration(s) * time.Second), Host: "a.test", Hash: hashOf(fmt.Sprint(s))}
}

// scanSeconds scans part from its head up to until and returns the due
// times of what it read, in seconds after t0.
func scanSeconds(t testing.TB, db *DB, part uint16, until time.Time) []int {
	t.Helper()
	var got []int
	if err := db.ScanDue(part, nil, until, func(e DueEntry) bool {
		got = append(got, int(e.Due.Sub(t0)/time.Second))
		return true
	}); err != nil {
		t.Fatal(err)
	}
	return got
}

// deleteSeconds deletes, in one batch, partition part's entries due at t0
// plus from to to seconds (to excluded), as dueAt made them.
func deleteSeconds(t testing.TB, db *DB, part uint16, from, to int) {
	t.Helper()
	b := db.NewBatch()
	for s := from; s < to; s++ {
		e := dueAt(part, s)
		b.DeleteDue(part, e.Due, e.Host, e.Hash)
	}
	commit(t, b)
}

// TestDueFloorSkipsTheDeleted: a scan from the head raises the floor to
// the first entry left, past the deleted ones, so that the next scan does
// not step over them; a partition with nothing due by until is not read;
// an emptied one has its floor above everything, and a new entry, even one
// before the old floor, lowers it again.
func TestDueFloorSkipsTheDeleted(t *testing.T) {
	db := openMem(t)
	b := db.NewBatch()
	for s := range 1000 {
		b.PutDue(dueAt(1, s))
	}
	commit(t, b)
	deleteSeconds(t, db, 1, 0, 990)
	if f := db.floors.get(1); f.at != 0 {
		t.Fatalf("floor before any scan: %d, want 0", f.at)
	}
	if _, known, _ := db.DueFloor(1); known {
		t.Fatal("DueFloor known before any scan")
	}
	if got := scanSeconds(t, db, 1, t0.Add(2000*time.Second)); len(got) != 10 || got[0] != 990 {
		t.Fatalf("scan: %v", got)
	}
	if f, want := db.floors.get(1).at, dueNanos(dueAt(1, 990).Due); f != want {
		t.Fatalf("floor after a scan: %d, want %d (the first entry left)", f, want)
	}
	if at, known, none := db.DueFloor(1); !known || none || !at.Equal(dueAt(1, 990).Due) {
		t.Fatalf("DueFloor after a scan: %v known %v none %v, want the first entry left's due time", at, known, none)
	}
	// Nothing due by until: the floor says so, and stays.
	if got := scanSeconds(t, db, 1, t0.Add(500*time.Second)); len(got) != 0 {
		t.Errorf("due by 500 s: %v", got)
	}
	if f, want := db.floors.get(1).at, dueNanos(dueAt(1, 990).Due); f != want {
		t.Errorf("floor after a scan that read nothing: %d, want %d", f, want)
	}
	// A scan that stops early still raises it to the first entry.
	deleteSeconds(t, db, 1, 990, 995)
	n := 0
	if err := db.ScanDue(1, nil, t0.Add(2000*time.Second), func(DueEntry) bool { n++; return false }); err != nil || n != 1 {
		t.Fatalf("a scan that stops at once: %d entries, %v", n, err)
	}
	if f, want := db.floors.get(1).at, dueNanos(dueAt(1, 995).Due); f != want {
		t.Errorf("floor after a scan that stopped: %d, want %d", f, want)
	}
	// Emptied: above everything.
	deleteSeconds(t, db, 1, 995, 1000)
	if got := scanSeconds(t, db, 1, t0.Add(2000*time.Second)); len(got) != 0 {
		t.Fatalf("emptied: %v", got)
	}
	if f := db.floors.get(1).at; f != noDue {
		t.Errorf("floor of an empty partition: %d, want %d", f, uint64(noDue))
	}
	if _, known, none := db.DueFloor(1); !known || !none {
		t.Errorf("DueFloor of an empty partition: known %v none %v, want both", known, none)
	}
	// A new entry before the old floor lowers it; other partitions keep
	// theirs.
	b = db.NewBatch()
	b.PutDue(dueAt(1, 7))
	b.PutDue(dueAt(1, 3))
	b.PutDue(dueAt(2, 1))
	commit(t, b)
	if got := scanSeconds(t, db, 1, t0.Add(2000*time.Second)); !slices.Equal(got, []int{3, 7}) {
		t.Errorf("after new entries: %v, want [3 7]", got)
	}
	if got := scanSeconds(t, db, 2, t0.Add(2000*time.Second)); !slices.Equal(got, []int{1}) {
		t.Errorf("partition 2: %v, want [1]", got)
	}
	// A scan from a cursor starts at the floor too, and leaves it.
	after := dueAt(1, 3)
	var got []int
	if err := db.ScanDue(1, &after, t0.Add(2000*time.Second), func(e DueEntry) bool {
		got = append(got, int(e.Due.Sub(t0)/time.Second))
		return true
	}); err != nil || !slices.Equal(got, []int{7}) {
		t.Errorf("after 3 s: %v, %v", got, err)
	}
}

// TestDueFloorMissesNoEntryCommittedDuringAScan: an entry committed while
// a scan reads (after its iterator was made, so the scan does not see it)
// is before the first entry that scan finds; the scan must not raise the
// floor past it, or no scan would ever read it.
func TestDueFloorMissesNoEntryCommittedDuringAScan(t *testing.T) {
	db := openMem(t)
	b := db.NewBatch()
	b.PutDue(dueAt(1, 100))
	commit(t, b)
	var first []int
	if err := db.ScanDue(1, nil, t0.Add(time.Hour), func(e DueEntry) bool {
		first = append(first, int(e.Due.Sub(t0)/time.Second))
		b := db.NewBatch()
		b.PutDue(dueAt(1, 50))
		commit(t, b)
		return true
	}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(first, []int{100}) {
		t.Fatalf("the scan during which 50 s was written: %v", first)
	}
	if got := scanSeconds(t, db, 1, t0.Add(time.Hour)); !slices.Equal(got, []int{50, 100}) {
		t.Errorf("the next scan: %v, want [50 100]", got)
	}
}

// TestDueFloorConcurrent: writers put and delete entries of two
// partitions while a scanner scans them from the head again and again;
// in the end a scan reads exactly the entries left.
func TestDueFloorConcurrent(t *testing.T) {
	db := openMem(t)
	var (
		mu   sync.Mutex
		live = map[uint16]map[int]bool{0: {}, 1: {}}
		wg   sync.WaitGroup
		stop = make(chan struct{})
	)
	for w := range 4 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 1))
			for range 500 {
				part := uint16(r.IntN(2))
				s := w*10000 + r.IntN(200)
				e := dueAt(part, s)
				b := db.NewBatch()
				mu.Lock()
				del := live[part][s]
				mu.Unlock()
				if del {
					b.DeleteDue(part, e.Due, e.Host, e.Hash)
				} else {
					b.PutDue(e)
				}
				if err := b.Commit(false); err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				live[part][s] = !del
				mu.Unlock()
			}
		})
	}
	var scans sync.WaitGroup
	scans.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			for part := range uint16(2) {
				if err := db.ScanDue(part, nil, t0.Add(100000*time.Second), func(DueEntry) bool { return true }); err != nil {
					t.Error(err)
					return
				}
			}
		}
	})
	wg.Wait()
	close(stop)
	scans.Wait()
	for part := range uint16(2) {
		var want []int
		for s, ok := range live[part] {
			if ok {
				want = append(want, s)
			}
		}
		slices.Sort(want)
		if got := scanSeconds(t, db, part, t0.Add(100000*time.Second)); !slices.Equal(got, want) {
			t.Errorf("partition %d: read %d entries, %d are left", part, len(got), len(want))
		}
	}
}

// BenchmarkScanDueAfterDeletes is a scan from the head of a partition
// whose first 100,000 entries were deleted and 100 are left, the
// tombstones in the memtable, as in a running crawl, after a first scan
// (which reads past them all, and raises the floor).
func BenchmarkScanDueAfterDeletes(b *testing.B) {
	db, err := Open("/db", &Options{FS: vfs.NewMem(), CacheSize: 8 << 20}) // the default memtable, as a crawl's
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	const n = 100_000
	w := db.NewBatch()
	for s := range n + 100 {
		w.PutDue(dueAt(1, s))
	}
	commit(b, w)
	deleteSeconds(b, db, 1, 0, n)
	until := t0.Add(2 * n * time.Second)
	scanSeconds(b, db, 1, until) // as a running crawl's scans have: the first one raised the floor
	b.ResetTimer()
	for b.Loop() {
		if got := scanSeconds(b, db, 1, until); len(got) != 100 {
			b.Fatalf("read %d entries", len(got))
		}
	}
}
