package queuebench

import (
	"testing"

	"github.com/weft-crawler/weft/internal/state"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestQueueBenchSmall runs both phases of weft bench queue at a small scale:
// every URL enqueued is leased exactly once, after a restart (and two
// timed restarts before it), with the frontier's memory within its bound
// and nothing left on disk.
func TestQueueBenchSmall(t *testing.T) {
	q := Bench{Dir: t.TempDir(), URLs: 30_000, Hosts: 700, Workers: 4, Partitions: 8}
	enq, err := q.Enqueue(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if enq.URLs != q.URLs {
		t.Fatalf("enqueued %d URLs, want %d", enq.URLs, q.URLs)
	}
	// Timed restarts lease one URL each and complete nothing: the drain
	// after them still finds every URL, once.
	for range 2 {
		r, err := q.Restart(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if r.FirstURL <= 0 || r.Open > r.Frontier || r.Frontier > r.FirstURL {
			t.Errorf("restart steps out of order: %+v", r)
		}
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
	d, _, err := state.Open(q.Dir, 8, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	front, tails, err := d.Left()
	if err != nil || front != 0 {
		t.Errorf("the front queues hold %d entries after the drain (err %v)", front, err)
	}
	if tails != 0 {
		t.Errorf("%d hosts still have tails after the drain", tails)
	}
	d.Close()
	// A third run finds nothing to do.
	again, err := q.Drain(t.Context())
	if err != nil || again.URLs != 0 {
		t.Errorf("drain of a drained state: %d URLs, err %v", again.URLs, err)
	}
}
