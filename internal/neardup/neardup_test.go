package neardup

import (
	"fmt"
	"testing"

	"github.com/weft-crawler/weft/internal/state"
)

// TestNearIndex judges fingerprints through the batches of a store: a
// match is found while its batch is pending and after it commits, a
// near-duplicate of an original is added as its copy, a page whose links
// are not followed is not added,
// a page is not a copy of itself nor of a deeper page, the index stops
// growing at its capacity, and a restart rebuilds it from the store.
func TestNearIndex(t *testing.T) {
	dir := t.TempDir()
	d, _, err := state.Open(dir, 4, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	n := New(9, 100, d.DB)
	judgeAt := func(pb *state.Batch, fp uint64, url string, depth int, follow bool) string {
		t.Helper()
		return judgeIn(t, n, pb, fp, url, depth, follow).Of
	}
	judge := func(pb *state.Batch, fp uint64, url string) string { return judgeAt(pb, fp, url, 1, true) }
	const a = 0x0123_4567_89ab_cdef
	pb := d.NewBatch()
	if of := judge(pb, a, "http://a.test/1"); of != "" {
		t.Fatalf("first page judged a copy of %s", of)
	}
	// Pending: the batch has not committed.
	pb2 := d.NewBatch()
	if of := judge(pb2, a^0b1011, "http://a.test/2"); of != "http://a.test/1" {
		t.Fatalf("3 bits from a pending page: copy of %q", of)
	}
	for _, pb := range []*state.Batch{pb, pb2} {
		if err := pb.Batch.Commit(false); err != nil {
			t.Fatal(err)
		}
		n.Settle(pb.Sims)
	}
	if len(n.pending) != 0 {
		t.Fatalf("%d pending after settle", len(n.pending))
	}
	pb = d.NewBatch()
	if of := judge(pb, a^0x1ff, "http://a.test/3"); of != "http://a.test/1" {
		t.Fatalf("9 bits from a stored page: copy of %q", of)
	}
	if of := judge(pb, a^0x3ff<<20, "http://a.test/4"); of != "" {
		t.Fatalf("10 bits from a stored page, 13 from its copy: copy of %q", of)
	}
	if of := judge(pb, ^uint64(a), "http://b.test/"); of != "" {
		t.Fatalf("an unrelated page: copy of %q", of)
	}
	// The same page fetched again is not a copy of itself.
	if of := judge(pb, a^1, "http://a.test/1"); of != "" {
		t.Fatalf("a page judged a copy of %q", of)
	}
	// A copy nearer the seeds than the original is not one: its links
	// were followed one hop deeper than its own would be. (Nearest to it
	// is the copy /2, which stands for /1 at /1's depth.)
	// Its words are a copy all the same (Match), for what weighs a page's
	// content (the trap budget, walls of copies).
	if v := judgeIn(t, n, pb, a^0b11, "http://a.test/shallow", 0, true); v.Of != "" || !v.Match {
		t.Fatalf("a copy at depth 0 of a page at depth 1: %+v, want no copy of one, a match", v)
	}
	// A nofollow page is judged, not added: its copies' links must be
	// followed.
	const c = 0x0f0f_0f0f_0f0f_0f0f
	held := n.ix.Len() // a, its copy a^0b1011, a^0x3ff<<20, ^a and the shallow copy
	if held != 5 {
		t.Fatalf("%d pages held, want 5", held)
	}
	if of := judgeAt(pb, c, "http://n.test/nofollow", 1, false); of != "" || n.ix.Len() != held {
		t.Fatalf("a nofollow page: copy of %q, %d held", of, n.ix.Len())
	}
	if of := judge(pb, c^1, "http://n.test/copy"); of != "" || n.ix.Len() != held+1 {
		t.Fatalf("a copy of a nofollow page: copy of %q, %d held; want an original, added", of, n.ix.Len())
	}
	// The next page fills the index; the one after is judged, not added.
	n.capacity = held + 2
	if v := judgeIn(t, n, pb, 0x5555_5555_5555_5555, "http://c.test/", 1, true); !v.Filled || !v.Added || n.ix.Len() != held+2 {
		t.Fatalf("at capacity: %+v, %d held", v, n.ix.Len())
	}
	if v := judgeIn(t, n, pb, 0x3333_3333_3333_3333, "http://e.test/", 1, true); v.Filled || v.Added || n.ix.Len() != held+2 {
		t.Fatalf("past capacity: %+v, %d held", v, n.ix.Len())
	}
	if of := judge(pb, 0x3333_3333_3333_3333^1, "http://e.test/2"); of != "" {
		t.Fatalf("a copy of a page the full index did not add: copy of %q", of)
	}
	if err := pb.Batch.Commit(false); err != nil {
		t.Fatal(err)
	}
	n.Settle(pb.Sims)
	d.Close()

	d, _, err = state.Open(dir, 4, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	n = New(9, 10, d.DB)
	if got, err := n.Restore(); got != 7 || err != nil {
		t.Fatalf("restore = %d, %v; want the 7 pages stored", got, err)
	}
	// Within the threshold are /1, its copy /2 and /shallow, an original
	// at depth 0 now: the shallowest stands for the family, whichever is
	// nearest and whatever order they came in.
	if of := judge(d.NewBatch(), a^0b100, "http://a.test/5"); of != "http://a.test/shallow" {
		t.Fatalf("after a restart: copy of %q", of)
	}
	if of := judge(d.NewBatch(), ^uint64(a)^1, "http://b.test/2"); of != "http://b.test/" {
		t.Fatalf("after a restart: copy of %q", of)
	}
}

// TestNearIndexFindsCopiesThroughCopies judges the variants of one page,
// each a few bits from it and twice that from each other, in an order
// where a variant comes first: every later one is still found, through
// the original's entry as the first variant's copy. A copy found through a
// copy does not join, so a chain of edits is cut at twice the threshold.
func TestNearIndexFindsCopiesThroughCopies(t *testing.T) {
	d, _, err := state.Open(t.TempDir(), 4, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	n := New(9, 100, d.DB)
	pb := d.NewBatch()
	judge := func(fp uint64, url string) string {
		t.Helper()
		return judgeIn(t, n, pb, fp, url, 1, true).Of
	}
	const o = 0x7777_0000_3333_0000 // the original; variants change 6 bits each
	v := func(i int) uint64 { return o ^ 0x3f<<(6*i) }
	if of := judge(v(1), "http://f.test/v1"); of != "" {
		t.Fatalf("the first variant: copy of %q", of)
	}
	if of := judge(o, "http://f.test/"); of != "http://f.test/v1" {
		t.Fatalf("the original, 6 bits from v1: copy of %q", of)
	}
	for i := 2; i <= 5; i++ {
		// 12 bits from v1, 6 from the original.
		if of := judge(v(i), fmt.Sprintf("http://f.test/v%d", i)); of != "http://f.test/v1" {
			t.Fatalf("variant %d: copy of %q, want v1's through the original", i, of)
		}
	}
	held := n.ix.Len() // v1 and the original as its copy: a copy of a copy is not held
	if held != 2 {
		t.Fatalf("%d fingerprints held, want 2", held)
	}
	// A chain: each edit 5 bits from the one before, away from v1 and o.
	c1 := v(2) ^ 0x1f<<40 // 17 bits from v1, 11 from o, 5 from v2 (not held)
	if of := judge(c1, "http://f.test/c1"); of != "" {
		t.Fatalf("an edit of a copy, 11 bits from every page held: copy of %q", of)
	}
}

// judgeIn judges fp in pb as a crawl does, which keeps the fingerprints
// added for Settle.
func judgeIn(t *testing.T, n *Index, pb *state.Batch, fp uint64, url string, depth int, follow bool) Verdict {
	t.Helper()
	v, err := n.Judge(fp, nil, url, depth, follow, false, pb.Batch)
	if err != nil {
		t.Fatal(err)
	}
	if v.Added {
		pb.Sims = append(pb.Sims, fp)
	}
	return v
}
