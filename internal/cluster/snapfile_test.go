package cluster

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weft-crawler/weft/internal/seen"
)

func writeSnap(t *testing.T, h snapHeader, base []byte, tail snapTail) ([]byte, *snapWriter) {
	t.Helper()
	var out bytes.Buffer
	w, err := newSnapWriter(&out, h)
	if err != nil {
		t.Fatal(err)
	}
	var br *snapReader
	if base != nil {
		if br, err = openSnap(bytes.NewReader(base), "base"); err != nil {
			t.Fatal(err)
		}
	}
	if err := mergeSnap(t.Context(), br, tail, w); err != nil {
		t.Fatal(err)
	}
	if err := w.close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes(), w
}

func readSnap(t *testing.T, b []byte) (snapHeader, map[string][2]string) {
	t.Helper()
	r, err := openSnap(bytes.NewReader(b), "s")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][2]string{}
	if err := r.each(func(e snapEntry) error {
		got[fmt.Sprintf("%x", e.Key[:2])] = [2]string{string(e.Link), string(e.Visit)}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return r.h, got
}

// TestSnapshotMerge: a URL's first offer is kept (the base's over an offer
// logged after it), its last visit is the latest (the tail's over the
// base's), and what only one side has is kept; the header says what the
// file covers.
func TestSnapshotMerge(t *testing.T) {
	k := func(b byte) seen.Key { return seen.Key{b, b} }
	base, w := writeSnap(t, snapHeader{Partition: 3, LinksBelow: 10, DoneBelow: 7}, nil, snapTail{
		k(1): {Key: k(1), Link: []byte("l1"), Visit: []byte("v1")},
		k(3): {Key: k(3), Link: []byte("l3")},
		k(5): {Key: k(5), Visit: []byte("v5")},
	})
	if w.links != 2 || w.visits != 2 {
		t.Errorf("first snapshot: %d links, %d visits; want 2, 2", w.links, w.visits)
	}
	merged, w := writeSnap(t, snapHeader{Partition: 3, LinksBelow: 20, DoneBelow: 15}, base, snapTail{
		k(0): {Key: k(0), Link: []byte("l0")},
		k(1): {Key: k(1), Link: []byte("l1-later"), Visit: []byte("v1-later")},
		k(3): {Key: k(3), Visit: []byte("v3")},
		k(5): {Key: k(5), Link: []byte("l5")},
		k(9): {Key: k(9), Link: []byte("l9"), Visit: []byte("v9")},
	})
	h, got := readSnap(t, merged)
	if h != (snapHeader{Partition: 3, LinksBelow: 20, DoneBelow: 15}) {
		t.Errorf("header %+v", h)
	}
	want := map[string][2]string{
		"0000": {"l0", ""},
		"0101": {"l1", "v1-later"},
		"0303": {"l3", "v3"},
		"0505": {"l5", "v5"},
		"0909": {"l9", "v9"},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("merged:\n got %v\nwant %v", got, want)
	}
	if w.links != 5 || w.visits != 4 {
		t.Errorf("merged: %d links, %d visits; want 5, 4", w.links, w.visits)
	}
}

// TestSnapshotRefusesDamage: a file cut short, with a byte changed, or
// not a snapshot at all is refused with an error naming it, never read as
// a smaller partition.
func TestSnapshotRefusesDamage(t *testing.T) {
	tail := snapTail{}
	for i := range 200 {
		k := seen.KeyOf(fmt.Sprintf("http://a.test/%d", i))
		tail[k] = &snapEntry{Key: k, Link: []byte(strings.Repeat("x", i)), Visit: []byte("v")}
	}
	good, _ := writeSnap(t, snapHeader{Partition: 1, LinksBelow: 5, DoneBelow: 5}, nil, tail)
	if _, got := readSnap(t, good); len(got) != 200 {
		t.Fatalf("read %d entries of 200", len(got))
	}
	flipped := bytes.Clone(good)
	flipped[len(flipped)/2] ^= 0x40
	for name, b := range map[string][]byte{
		"cut":     good[:len(good)-12],
		"flipped": flipped,
		"other":   []byte("WARC/1.1\r\n"),
	} {
		r, err := openSnap(bytes.NewReader(b), name)
		if err == nil {
			err = r.each(func(snapEntry) error { return nil })
		}
		if err == nil || !strings.Contains(err.Error(), "snapshot "+name) {
			t.Errorf("%s: %v, want an error naming it", name, err)
		}
	}
}

// TestSnapshotHeaderChecked: a file whose bytes are sound but which is not
// the snapshot its record describes (another partition, other sequences)
// is refused.
func TestSnapshotHeaderChecked(t *testing.T) {
	b, _ := writeSnap(t, snapHeader{Partition: 3, LinksBelow: 10, DoneBelow: 7}, nil, snapTail{})
	path := filepath.Join(t.TempDir(), "s.wsnap")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := checkHeader(path, 3, snapPointer{Object: "o", LinksBelow: 10, DoneBelow: 7}); err != nil {
		t.Errorf("the right file: %v", err)
	}
	for _, c := range []struct {
		p   int
		ptr snapPointer
	}{{4, snapPointer{Object: "o", LinksBelow: 10, DoneBelow: 7}}, {3, snapPointer{Object: "o", LinksBelow: 11, DoneBelow: 7}}} {
		if err := checkHeader(path, c.p, c.ptr); err == nil || !strings.Contains(err.Error(), "snapshot o covers") {
			t.Errorf("partition %d, %+v: %v", c.p, c.ptr, err)
		}
	}
}
