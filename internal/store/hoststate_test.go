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

// A record of version 2 (without the directories) reads with none.
func TestHostStateVersion2(t *testing.T) {
	db := openMem(t)
	v2 := []byte{2}
	for _, v := range []int64{41, 3, 2, 1} {
		v2 = binary.AppendVarint(v2, v)
	}
	v2 = binary.AppendUvarint(v2, 5)
	v2 = append(v2, 3, 2, 1, 0, 0)
	if err := db.pdb.Set(appendHostStateKey(nil, 7, "a.test"), v2, nil); err != nil {
		t.Fatal(err)
	}
	want := HostState{Accepted: 41, Throttled: 3, ServerErrors: 2, LinksCut: 1, NearRing: 5, NearPages: 3, NearNext: 2, NearCut: true}
	if got, ok, err := db.GetHostState(7, "a.test"); err != nil || !ok || got != want {
		t.Fatalf("GetHostState = %+v, %v, %v; want %+v", got, ok, err, want)
	}
}

// A record of version 3 reads without its directories, whose layout
// changed.
func TestHostStateVersion3(t *testing.T) {
	db := openMem(t)
	v3 := []byte{3}
	for _, v := range []int64{41, 3, 2, 1} {
		v3 = binary.AppendVarint(v3, v)
	}
	v3 = binary.AppendUvarint(v3, 5)
	v3 = append(v3, 3, 2, 0, 0, 0)
	v3 = appendString(v3, "/c/\n/c/hats/\n")
	if err := db.pdb.Set(appendHostStateKey(nil, 7, "a.test"), v3, nil); err != nil {
		t.Fatal(err)
	}
	want := HostState{Accepted: 41, Throttled: 3, ServerErrors: 2, LinksCut: 1, NearRing: 5, NearPages: 3, NearNext: 2}
	if got, ok, err := db.GetHostState(7, "a.test"); err != nil || !ok || got != want {
		t.Fatalf("GetHostState = %+v, %v, %v; want %+v", got, ok, err, want)
	}
}

// A record of version 1 (the counters only) reads with the rest zero.
func TestHostStateVersion1(t *testing.T) {
	db := openMem(t)
	v1 := []byte{1}
	for _, v := range []int64{41, 3, 2, 1} {
		v1 = binary.AppendVarint(v1, v)
	}
	if err := db.pdb.Set(appendHostStateKey(nil, 7, "a.test"), v1, nil); err != nil {
		t.Fatal(err)
	}
	want := HostState{Accepted: 41, Throttled: 3, ServerErrors: 2, LinksCut: 1}
	if got, ok, err := db.GetHostState(7, "a.test"); err != nil || !ok || got != want {
		t.Fatalf("GetHostState = %+v, %v, %v; want %+v", got, ok, err, want)
	}
}
