// Package bytesize reads and writes sizes in bytes as every size flag and
// profile key of weft takes them: a whole number of bytes, or a whole
// number and a unit, KB, MB, GB, TB (powers of 1000) or KiB, MiB, GiB, TiB
// (powers of 1024), in any letter case, with or without a space before it:
// 65536, 64KiB, 10MiB, 500 KB, 1GB.
//
// The one-letter forms (10M, 64k) are refused: whether they mean powers of
// 1000 or of 1024 differs from one program to the next.
package bytesize

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// units by their lower-case names.
var units = []struct {
	name string
	n    int64
}{
	{"tib", 1 << 40}, {"gib", 1 << 30}, {"mib", 1 << 20}, {"kib", 1 << 10},
	{"tb", 1e12}, {"gb", 1e9}, {"mb", 1e6}, {"kb", 1e3},
	{"b", 1}, {"", 1},
}

// spelt are the units as Format writes them.
var spelt = map[string]string{"tib": "TiB", "gib": "GiB", "mib": "MiB", "kib": "KiB", "tb": "TB", "gb": "GB", "mb": "MB", "kb": "KB"}

// Syntax says what a size is, for errors and help.
const Syntax = "a whole number of bytes, or one with a unit: KB, MB, GB, TB (powers of 1000) or KiB, MiB, GiB, TiB (powers of 1024), such as 10MiB"

// Parse reads a size. Its error names s and says what a size is.
func Parse(s string) (int64, error) {
	t := strings.TrimSpace(s)
	end := 0
	for end < len(t) && t[end] >= '0' && t[end] <= '9' {
		end++
	}
	digits, unit := t[:end], strings.ToLower(strings.TrimSpace(t[end:]))
	if digits == "" {
		return 0, fmt.Errorf("bytesize: %q is not a size: want %s", s, Syntax)
	}
	switch unit {
	case "k", "m", "g", "t":
		U := strings.ToUpper(unit)
		return 0, fmt.Errorf("bytesize: %q: is %s a power of 1000 or of 1024? write %s%sB or %s%siB", s, U, digits, U, digits, U)
	}
	for _, u := range units {
		if u.name != unit {
			continue
		}
		n, err := strconv.ParseInt(digits, 10, 64)
		if err != nil || n > math.MaxInt64/u.n {
			return 0, fmt.Errorf("bytesize: %q is too large: at most %d bytes", s, int64(math.MaxInt64))
		}
		return n * u.n, nil
	}
	return 0, fmt.Errorf("bytesize: %q is not a size: want %s", s, Syntax)
}

// Format writes n as Parse reads it: in the largest unit that holds it
// whole (10485760 is 10MiB, 500000 is 500KB), else in bytes.
func Format(n int64) string {
	best := -1
	for i, u := range units {
		if n > 0 && u.n > 1 && n%u.n == 0 && (best < 0 || u.n > units[best].n) {
			best = i
		}
	}
	if best < 0 {
		return strconv.FormatInt(n, 10)
	}
	return strconv.FormatInt(n/units[best].n, 10) + spelt[units[best].name]
}

// Type is the type name of a Value, as flag references and profiles
// show it.
const Type = "size"

// Value is a size flag (a pflag.Value): what Set is given is read by
// Parse into the int64 it points to.
type Value struct {
	p *int64
	// minusOne lets the flag also be -1, for the flags whose help gives
	// it a meaning ("no cap", "off").
	minusOne bool
}

// NewValue makes a Value storing into p, which it sets to def.
func NewValue(p *int64, def int64) *Value {
	*p = def
	return &Value{p: p}
}

// NewValueOrMinusOne is NewValue for a flag that also takes -1.
func NewValueOrMinusOne(p *int64, def int64) *Value {
	v := NewValue(p, def)
	v.minusOne = true
	return v
}

// Set reads s as a size (or -1, when the Value takes it).
func (v *Value) Set(s string) error {
	if v.minusOne && strings.TrimSpace(s) == "-1" {
		*v.p = -1
		return nil
	}
	n, err := Parse(s)
	if err != nil {
		return err
	}
	*v.p = n
	return nil
}

func (v *Value) String() string {
	if v == nil || v.p == nil {
		return "0"
	}
	return Format(*v.p)
}

// Type is "size".
func (v *Value) Type() string { return Type }
