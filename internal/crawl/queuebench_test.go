package crawl

import (
	"strings"
	"testing"
)

// TestQueueBenchSmall runs both phases of weft bench queue at a small scale:
// every URL enqueued is leased exactly once, after a restart, with the
// frontier's memory within its bound and nothing left on disk.
func TestQueueBenchSmall(t *testing.T) {
	q := QueueBench{Dir: t.TempDir(), URLs: 30_000, Hosts: 700, Workers: 4, Partitions: 8}
	enq, err := q.Enqueue(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if enq.URLs != q.URLs {
		t.Fatalf("enqueued %d URLs, want %d", enq.URLs, q.URLs)
	}
	dr, err := q.Drain(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if dr.URLs != q.URLs || dr.Duplicates != 0 {
		t.Fatalf("drained %d URLs with %d leased twice, want %d once each", dr.URLs, dr.Duplicates, q.URLs)
	}
	// Three front queues of 4096 and 1024 heads of 64 bound it; with 700
	// hosts and interleaved URLs, heads stay short.
	if dr.InMemory > 3*4096+1024*64 || dr.InMemory == 0 {
		t.Errorf("frontier held up to %d URLs in memory", dr.InMemory)
	}
	d, _, err := openDurable(q.Dir, 8, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	for p := range 3 {
		if n, err := d.db.CountFront(uint8(p)); err != nil || n != 0 {
			t.Errorf("front queue %d holds %d entries after the drain (err %v)", p, n, err)
		}
	}
	tails := 0
	d.db.QueuedHosts(func(uint16, string) bool { tails++; return true })
	if tails != 0 {
		t.Errorf("%d hosts still have tails after the drain", tails)
	}
	d.close()
	// A third run finds nothing to do.
	again, err := q.Drain(t.Context())
	if err != nil || again.URLs != 0 {
		t.Errorf("drain of a drained state: %d URLs, err %v", again.URLs, err)
	}
}

// TestStateOfAnotherFormatIsRefused opens a state without the format this
// build writes (an older weft's, whose URLs wait in per-host queues the
// frontier never reads): it must be refused by name, not resumed with its
// queue silently ignored.
func TestStateOfAnotherFormatIsRefused(t *testing.T) {
	dir := t.TempDir()
	d, _, err := openDurable(dir, 4, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	b := d.db.NewBatch()
	b.PutMeta(metaFormat, []byte("1"))
	if err := b.Commit(true); err != nil {
		t.Fatal(err)
	}
	d.close()
	_, _, err = openDurable(dir, 4, false, nil)
	if err == nil || !strings.Contains(err.Error(), "--fresh") || !strings.Contains(err.Error(), dir) {
		t.Fatalf("reopen: %v, want a refusal naming the directory and --fresh", err)
	}
	d, found, err := openDurable(dir, 4, true, nil)
	if err != nil || found {
		t.Fatalf("--fresh over it: found=%v err=%v", found, err)
	}
	d.close()
}
