// Package sketch counts events per key in fixed memory: a count-min sketch
// (Cormode and Muthukrishnan 2005) with conservative update (Estan and
// Varghese 2002), for counts that only need to be about right, such as the
// in-links of every URL of a crawl too large to count them exactly.
//
// Each key maps to one counter in each of Depth rows; an estimate is the
// least of its counters, so it is never below the true count (until a
// counter saturates at 65,535) and above it only by what other keys added
// to all of its counters. Conservative update raises only the counters that
// are at that least value, which keeps the excess several times smaller
// than plain count-min's for the skewed counts links make. With n events
// counted in rows of width w, the excess is at most e·n/w with probability
// 1 - e^-Depth.
package sketch

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"sync"
)

// Depth is the number of rows: with 4, an estimate exceeds its error bound
// once in e^4 ≈ 55 keys.
const Depth = 4

// Sketch is a count-min sketch of 16-bit counters. It is safe for
// concurrent use.
type Sketch struct {
	mu    sync.Mutex
	shift uint // 64 - log2(width)
	rows  [Depth][]uint16
}

// New returns a sketch of at least bytes of counters (and at least 4 KiB),
// less than twice as many: rows whose width is a power of two.
func New(bytes int) *Sketch {
	width, shift := widthOf(bytes, 2)
	s := &Sketch{shift: shift}
	for i := range s.rows {
		s.rows[i] = make([]uint16, width)
	}
	return s
}

// widthOf is the width of rows of counters of size bytes each, in at
// least bytes (and at least 4 KiB) and less than twice as many, and the
// shift that indexes them.
func widthOf(bytes, size int) (width int, shift uint) {
	width = 1 << bits.Len(uint(max(bytes, 4<<10)/(size*Depth)-1))
	return width, uint(64 - bits.TrailingZeros(uint(width)))
}

// Bytes is the memory the counters take.
func (s *Sketch) Bytes() int { return 2 * Depth * len(s.rows[0]) }

// slots returns the counter of key in each row.
func (s *Sketch) slots(key [16]byte) [Depth]uint64 { return slots(key, s.shift) }

// slots returns the counter of key in each row of a sketch whose rows are
// 2^(64-shift) wide. key should be a hash: its 16 bytes are mixed into one
// independent index per row.
func slots(key [16]byte, shift uint) (idx [Depth]uint64) {
	a := binary.LittleEndian.Uint64(key[:8])
	b := binary.LittleEndian.Uint64(key[8:]) | 1
	for i := range idx {
		// Kirsch–Mitzenmacher: h_i = a + i·b, then a multiplicative mix
		// whose top bits index the row.
		h := (a + uint64(i)*b) * 0x9e3779b97f4a7c15
		idx[i] = h >> shift
	}
	return idx
}

// Add counts one event of key and returns its new estimate.
func (s *Sketch) Add(key [16]byte) int {
	idx := s.slots(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	least := s.least(idx)
	if least == 0xffff {
		return int(least) // saturated
	}
	for i, j := range idx {
		if s.rows[i][j] == least {
			s.rows[i][j] = least + 1
		}
	}
	return int(least) + 1
}

// Count returns the estimate of key's events.
func (s *Sketch) Count(key [16]byte) int {
	idx := s.slots(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	return int(s.least(idx))
}

// least is the least of key's counters (idx); s.mu is held.
func (s *Sketch) least(idx [Depth]uint64) uint16 {
	least := uint16(0xffff)
	for i, j := range idx {
		least = min(least, s.rows[i][j])
	}
	return least
}

// magic starts an encoded sketch; its last byte is the format version.
var magic = [4]byte{'c', 'm', 's', 1}

// MarshalBinary encodes the sketch: magic, width, then the rows as
// little-endian counters.
func (s *Sketch) MarshalBinary() ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	w := len(s.rows[0])
	out := make([]byte, 0, 8+2*Depth*w)
	out = append(out, magic[:]...)
	out = binary.LittleEndian.AppendUint32(out, uint32(w))
	for _, r := range s.rows {
		for _, c := range r {
			out = binary.LittleEndian.AppendUint16(out, c)
		}
	}
	return out, nil
}

// UnmarshalBinary replaces the sketch with an encoded one, which may have
// another width.
func (s *Sketch) UnmarshalBinary(b []byte) error {
	if len(b) < 8 || [4]byte(b[:4]) != magic {
		return errors.New("sketch: not an encoded count-min sketch of this version")
	}
	w := int(binary.LittleEndian.Uint32(b[4:8]))
	if w < 1 || w&(w-1) != 0 || len(b)-8 != 2*Depth*w {
		return fmt.Errorf("sketch: width %d does not fit %d bytes of counters", w, len(b)-8)
	}
	var rows [Depth][]uint16
	off := 8
	for i := range rows {
		rows[i] = make([]uint16, w)
		for j := range rows[i] {
			rows[i][j] = binary.LittleEndian.Uint16(b[off:])
			off += 2
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rows = rows
	s.shift = uint(64 - bits.TrailingZeros(uint(w)))
	return nil
}
