package bytesize

import (
	"math"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func TestParse(t *testing.T) {
	for in, want := range map[string]int64{
		"0": 0, "1": 1, "65536": 65536, " 42 ": 42, "10B": 10,
		"1KB": 1000, "1kb": 1000, "500 KB": 500_000, "10MB": 10_000_000, "2GB": 2_000_000_000, "3TB": 3_000_000_000_000,
		"1KiB": 1024, "64kib": 64 << 10, "10MiB": 10 << 20, "10 MiB": 10 << 20, "10mib": 10 << 20, "1GiB": 1 << 30, "2TiB": 2 << 40,
		"8388607TiB": 8388607 << 40,
	} {
		if got, err := Parse(in); err != nil || got != want {
			t.Errorf("Parse(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for in, why := range map[string]string{
		"":                     "is not a size: want a whole number of bytes",
		"MiB":                  "is not a size",
		"-1":                   "is not a size",
		"+5":                   "is not a size",
		"1.5GiB":               "is not a size",
		"10 megs":              "is not a size",
		"10MiBs":               "is not a size",
		"0x10":                 "is not a size",
		"10M":                  "is M a power of 1000 or of 1024? write 10MB or 10MiB",
		"64k":                  "is K a power of 1000 or of 1024? write 64KB or 64KiB",
		"8388608TiB":           "too large",
		"99999999999999999999": "too large",
	} {
		_, err := Parse(in)
		if err == nil || !strings.Contains(err.Error(), why) || !strings.Contains(err.Error(), `"`+in+`"`) || !strings.HasPrefix(err.Error(), "bytesize: ") {
			t.Errorf("Parse(%q): %v, want an error naming it and %q", in, err, why)
		}
	}
}

func TestFormat(t *testing.T) {
	for n, want := range map[int64]string{
		0: "0", 1: "1", 1000: "1KB", 1024: "1KiB", 1500: "1500", 10 << 20: "10MiB", 512000: "500KiB", 500_000: "500KB",
		1 << 30: "1GiB", 1e12: "1TB", 3 << 40: "3TiB", -1: "-1", math.MaxInt64: "9223372036854775807",
	} {
		if got := Format(n); got != want {
			t.Errorf("Format(%d) = %q, want %q", n, got, want)
		}
		if n >= 0 {
			if back, err := Parse(Format(n)); err != nil || back != n {
				t.Errorf("Parse(Format(%d)) = %d, %v", n, back, err)
			}
		}
	}
}

// A Value takes what Parse takes, and -1 only when made to.
func TestValue(t *testing.T) {
	var n int64
	v := NewValue(&n, 10<<20)
	if n != 10<<20 || v.String() != "10MiB" || v.Type() != "size" {
		t.Fatalf("NewValue: %d %q %q", n, v, v.Type())
	}
	if err := v.Set("64KiB"); err != nil || n != 64<<10 {
		t.Errorf("Set(64KiB): %d, %v", n, err)
	}
	if err := v.Set("-1"); err == nil || n != 64<<10 {
		t.Errorf("Set(-1) on a Value without it: %d, %v", n, err)
	}
	m := NewValueOrMinusOne(&n, 0)
	if err := m.Set("-1"); err != nil || n != -1 || m.String() != "-1" {
		t.Errorf("Set(-1): %d, %v", n, err)
	}
	if err := m.Set("-2"); err == nil {
		t.Errorf("Set(-2) taken: %d", n)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"10MiB", "1 KB", "0", "9223372036854775807", "64k"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := Parse(s)
		if err != nil {
			return
		}
		if n < 0 {
			t.Fatalf("Parse(%q) = %d, negative", s, n)
		}
		if back, err := Parse(Format(n)); err != nil || back != n {
			t.Fatalf("Parse(Format(Parse(%q))) = %d, %v; want %d", s, back, err, n)
		}
	})
}
