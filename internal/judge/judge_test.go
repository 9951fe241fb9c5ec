package judge

import (
	"log/slog"
	"testing"

	"github.com/weft-crawler/weft/internal/hostmap"
	"github.com/weft-crawler/weft/internal/store"
)

// memStates is a store's host state table in memory.
type memStates map[string]store.HostState

func (m memStates) Load(host string) store.HostState     { return m[host] }
func (m memStates) Save(host string, st store.HostState) { m[host] = st }

// The near-duplicate windows and the index alias states are part of the
// per-host states: with room for one host, judging pages of two hosts in
// turn evicts each at every step, and each window still fills and cuts its
// host off exactly when most of its own last pages were copies; the alias
// bits of each scheme come back from the store as they were learnt.
func TestTrapWindowsAndAliasesKeptThroughEviction(t *testing.T) {
	db, err := store.Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	states := hostmap.NewBounded[store.HostState](1, 1, memStates{})
	j := New(Config{Hosts: states, NearDupWindow: 8, Partitions: 1, Log: slog.New(slog.DiscardHandler)})
	b := db.NewBatch()
	defer b.Close()
	// a: all copies, cut at its eighth page; b: one copy in two, never.
	for i := range 8 {
		if j.copies.trappedInMemory("a") || j.Trapped("a") {
			t.Fatalf("a cut off after %d pages, want 8", i)
		}
		j.JudgedPage(b, "a", true)
		j.JudgedPage(b, "b", i%2 == 0)
	}
	if n := states.Len(); n != 1 {
		t.Fatalf("%d hosts' states in memory, bound 1", n)
	}
	if j.copies.trappedInMemory("a") {
		t.Fatal("a is in memory; b, judged last, should be")
	}
	if !j.Trapped("a") || j.Trapped("b") {
		t.Fatalf("a cut off %v, b %v; want a only (its window read back from the store)", j.Trapped("a"), j.Trapped("b"))
	}
	if n, names := j.Cut(); n != 1 || names[0] != "a" {
		t.Fatalf("cut off: %d %v, want a", n, names)
	}

	x := j.aliases
	states.Update("a", func(s store.HostState) store.HostState { s.AliasSame |= 1 << 1; return s })   // http, index.htm
	states.Update("a", func(s store.HostState) store.HostState { s.AliasDiffer |= 1 << 2; return s }) // https, index.html
	states.Get("b")                                                                                   // evicts a
	if got, _, _ := x.state("http", "a"); got != (aliasState{same: 2}) || !got.holds(1) || got.holds(0) {
		t.Errorf("http://a read back as %+v, want index.htm served alike", got)
	}
	if got, _, _ := x.state("https", "a"); got != (aliasState{differ: 1}) || got.holds(0) {
		t.Errorf("https://a read back as %+v, want index.html differing", got)
	}
	if _, _, ok := x.state("ftp", "a"); ok {
		t.Error("an ftp origin has an alias state")
	}
}
