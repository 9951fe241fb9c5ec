package sketch

import (
	"math"
	"sync"
)

// Sums is a count-min sketch of weighted events: each adds an amount to
// its key's 32-bit sum, and an estimate is never below the true sum
// (until it saturates at math.MaxUint32). It is updated conservatively,
// as Sketch is: a counter is raised only as far as the key's new least
// sum. It is safe for concurrent use.
type Sums struct {
	mu    sync.Mutex
	shift uint
	rows  [Depth][]uint32
}

// NewSums returns a sketch of at least bytes of counters (and at least
// 4 KiB), less than twice as many.
func NewSums(bytes int) *Sums {
	width, shift := widthOf(bytes, 4)
	s := &Sums{shift: shift}
	for i := range s.rows {
		s.rows[i] = make([]uint32, width)
	}
	return s
}

// Bytes is the memory the counters take.
func (s *Sums) Bytes() int { return 4 * Depth * len(s.rows[0]) }

// Add adds n to key's sum and returns its estimate before and after.
func (s *Sums) Add(key [16]byte, n uint32) (before, after uint32) {
	idx := slots(key, s.shift)
	s.mu.Lock()
	defer s.mu.Unlock()
	before = s.least(idx)
	after = uint32(min(uint64(before)+uint64(n), math.MaxUint32))
	for i, j := range idx {
		s.rows[i][j] = max(s.rows[i][j], after)
	}
	return before, after
}

// Sum returns the estimate of key's sum.
func (s *Sums) Sum(key [16]byte) uint32 {
	idx := slots(key, s.shift)
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.least(idx)
}

// least is the least of key's counters (idx); s.mu is held.
func (s *Sums) least(idx [Depth]uint64) uint32 {
	least := uint32(math.MaxUint32)
	for i, j := range idx {
		least = min(least, s.rows[i][j])
	}
	return least
}
