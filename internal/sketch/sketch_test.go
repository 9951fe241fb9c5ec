package sketch

import (
	"crypto/sha256"
	"math/rand/v2"
	"strconv"
	"sync"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func key(s string) [16]byte {
	h := sha256.Sum256([]byte(s))
	return [16]byte(h[:16])
}

// TestCounts: a sketch far from full counts exactly; a full one never
// undercounts, and overcounts little on counts shaped like in-links (most
// URLs one to a few, one in a hundred up to two hundred): with as many
// URLs as a row has counters, nine in ten exact; with twice as many, two
// thirds exact and the excess under one on average.
func TestCounts(t *testing.T) {
	s := New(64 << 10)
	if s.Bytes() != 64<<10 {
		t.Fatalf("%d bytes, want 64 KiB", s.Bytes())
	}
	for i := range 100 {
		for range i {
			s.Add(key(strconv.Itoa(i)))
		}
	}
	for i := range 100 {
		if got := s.Count(key(strconv.Itoa(i))); got != i {
			t.Errorf("key %d: %d, want exact", i, got)
		}
	}
	const width = 8192 // 64 KiB in 4 rows of 2-byte counters
	for _, c := range []struct {
		perCounter        int
		exact, meanExcess float64
	}{{1, 0.9, 0.2}, {2, 0.6, 1}} {
		s := New(64 << 10)
		r := rand.New(rand.NewPCG(1, 2))
		truth := make([]int, c.perCounter*width)
		for i := range truth {
			truth[i] = 1 + int(r.ExpFloat64()*2)
			if r.IntN(100) == 0 {
				truth[i] += r.IntN(200)
			}
			for range truth[i] {
				s.Add(key(strconv.Itoa(i)))
			}
		}
		exact, excess := 0, 0
		for i, n := range truth {
			got := s.Count(key(strconv.Itoa(i)))
			if got < n {
				t.Fatalf("key %d: %d, below its true count %d", i, got, n)
			}
			if got == n {
				exact++
			}
			excess += got - n
		}
		fe, me := float64(exact)/float64(len(truth)), float64(excess)/float64(len(truth))
		t.Logf("%d URLs per counter: %.2f exact, mean excess %.2f", c.perCounter, fe, me)
		if fe < c.exact || me > c.meanExcess {
			t.Errorf("%d URLs per counter: %.2f exact, mean excess %.2f; want at least %.2f and at most %.2f", c.perCounter, fe, me, c.exact, c.meanExcess)
		}
	}
}

// TestSaturates: a counter stops at 65,535 rather than wrapping to 0.
func TestSaturates(t *testing.T) {
	s := New(4 << 10)
	k := key("x")
	for range 70000 {
		s.Add(k)
	}
	if got := s.Count(k); got != 65535 {
		t.Errorf("after 70,000: %d, want 65,535", got)
	}
}

// TestRoundTrip: an encoded sketch decodes to the same counts; bad input
// is an error, and leaves the sketch as it was.
func TestRoundTrip(t *testing.T) {
	s := New(16 << 10)
	for i := range 1000 {
		s.Add(key(strconv.Itoa(i % 37)))
	}
	b, err := s.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	d := New(4 << 10) // another width: the encoded one's wins
	if err := d.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	for i := range 37 {
		if a, b := s.Count(key(strconv.Itoa(i))), d.Count(key(strconv.Itoa(i))); a != b {
			t.Errorf("key %d: %d, decoded %d", i, a, b)
		}
	}
	for _, bad := range [][]byte{nil, []byte("cms"), append([]byte("cmsX"), b[4:]...), b[:len(b)-1], append([]byte{}, b[:8]...)} {
		if err := d.UnmarshalBinary(bad); err == nil {
			t.Errorf("%d bytes decoded without error", len(bad))
		}
	}
	if d.Count(key("0")) != s.Count(key("0")) {
		t.Error("a failed decode changed the sketch")
	}
}

// TestConcurrent adds from many goroutines (for the race detector) and
// loses no event.
func TestConcurrent(t *testing.T) {
	s := New(4 << 10)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 1000 {
				s.Add(key("shared"))
			}
		})
	}
	wg.Wait()
	if got := s.Count(key("shared")); got != 8000 {
		t.Errorf("%d, want 8,000", got)
	}
}
