package crawl

import (
	"testing"
)

// TestNearIndex judges fingerprints through the batches of a store: a
// match is found while its batch is pending and after it commits, a
// near-duplicate is not added, the index stops growing at its capacity,
// and a restart rebuilds it from the store.
func TestNearIndex(t *testing.T) {
	dir := t.TempDir()
	d, _, err := openDurable(dir, 4, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	n := newNearIndex(9, 3, d.db)
	judge := func(pb *pageBatch, fp uint64, url string) string {
		t.Helper()
		of, _, err := n.judge(fp, url, pb)
		if err != nil {
			t.Fatal(err)
		}
		return of
	}
	const a = 0x0123_4567_89ab_cdef
	pb := d.newBatch()
	if of := judge(pb, a, "http://a.test/1"); of != "" {
		t.Fatalf("first page judged a copy of %s", of)
	}
	// Pending: the batch has not committed.
	if of := judge(d.newBatch(), a^0b1011, "http://a.test/2"); of != "http://a.test/1" {
		t.Fatalf("3 bits from a pending page: copy of %q", of)
	}
	if err := pb.b.Commit(false); err != nil {
		t.Fatal(err)
	}
	n.settle(pb.sims)
	if len(n.pending) != 0 {
		t.Fatalf("%d pending after settle", len(n.pending))
	}
	pb = d.newBatch()
	if of := judge(pb, a^0x1ff, "http://a.test/3"); of != "http://a.test/1" {
		t.Fatalf("9 bits from a stored page: copy of %q", of)
	}
	if of := judge(pb, a^0x3ff, "http://a.test/4"); of != "" {
		t.Fatalf("10 bits from a stored page: copy of %q", of)
	}
	if of := judge(pb, ^uint64(a), "http://b.test/"); of != "" {
		t.Fatalf("an unrelated page: copy of %q", of)
	}
	// Capacity 3 reached: a new page is judged, not added.
	if _, filled, _ := n.judge(0x5555_5555_5555_5555, "http://c.test/", pb); filled || n.ix.Len() != 3 {
		t.Fatalf("past capacity: filled %v, %d held", filled, n.ix.Len())
	}
	if of := judge(pb, 0x5555_5555_5555_5555^1, "http://c.test/2"); of != "" {
		t.Fatalf("a copy of a page the full index did not add: copy of %q", of)
	}
	if err := pb.b.Commit(false); err != nil {
		t.Fatal(err)
	}
	n.settle(pb.sims)
	d.close()

	d, _, err = openDurable(dir, 4, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer d.close()
	n = newNearIndex(9, 10, d.db)
	if got, err := n.restore(); got != 3 || err != nil {
		t.Fatalf("restore = %d, %v; want the 3 pages stored", got, err)
	}
	if of := judge(d.newBatch(), a^0b111, "http://a.test/5"); of != "http://a.test/1" {
		t.Fatalf("after a restart: copy of %q", of)
	}
	if of := judge(d.newBatch(), ^uint64(a)^1, "http://b.test/2"); of != "http://b.test/" {
		t.Fatalf("after a restart: copy of %q", of)
	}
}
