package store

import (
	"encoding/binary"
	"testing"
)

func TestHostStateRoundTrip(t *testing.T) {
	db := openMem(t)
	want := HostState{Accepted: 41, Throttled: 3, ServerErrors: 2, LinksCut: 1,
		NearRing: 1<<63 | 5, NearPages: 64, NearNext: 3, NearCut: true, AliasSame: 0b0101, AliasDiffer: 0b1000,
		NearDirs: "/c/shoes/\t3\n\n/c/hats/color-green/\t5\n"}
	b := db.NewBatch()
	b.PutHostState(7, "a.test", want)
	if err := b.Commit(false); err != nil {
		t.Fatal(err)
	}
	got, ok, err := db.GetHostState(7, "a.test")
	if err != nil || !ok || got != want {
		t.Fatalf("GetHostState = %+v, %v, %v; want %+v", got, ok, err, want)
	}
	if _, ok, err := db.GetHostState(7, "b.test"); ok || err != nil {
		t.Fatalf("absent host: %v, %v", ok, err)
	}
	// A host's state is not its host record.
	if _, ok, _ := db.GetHost(7, "a.test"); ok {
		t.Fatal("the host state reads as a host record")
	}
}

// Records of the versions before read with what they lack zero: version
// 1 the counters only, 2 without the directories, 3 without them too (their
// layout changed).
func TestHostStateOlderVersions(t *testing.T) {
	counters := HostState{Accepted: 41, Throttled: 3, ServerErrors: 2, LinksCut: 1}
	window := counters
	window.NearRing, window.NearPages, window.NearNext = 5, 3, 2
	cut := window
	cut.NearCut = true
	for _, c := range []struct {
		version byte
		rest    func([]byte) []byte
		want    HostState
	}{
		{1, func(b []byte) []byte { return b }, counters},
		{2, func(b []byte) []byte { return append(binary.AppendUvarint(b, 5), 3, 2, 1, 0, 0) }, cut},
		{3, func(b []byte) []byte {
			return appendString(append(binary.AppendUvarint(b, 5), 3, 2, 0, 0, 0), "/c/\n/c/hats/\n")
		}, window},
	} {
		db := openMem(t)
		v := []byte{c.version}
		for _, n := range []int64{41, 3, 2, 1} {
			v = binary.AppendVarint(v, n)
		}
		if err := db.pdb.Set(appendHostStateKey(nil, 7, "a.test"), c.rest(v), nil); err != nil {
			t.Fatal(err)
		}
		if got, ok, err := db.GetHostState(7, "a.test"); err != nil || !ok || got != c.want {
			t.Errorf("version %d: GetHostState = %+v, %v, %v; want %+v", c.version, got, ok, err, c.want)
		}
	}
}
