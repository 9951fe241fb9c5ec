package state

import (
	"fmt"
	"testing"

	"github.com/weft-crawler/weft/internal/store"
)

// TestHostStatesOutlastMemoryAndRestart: a host state evicted from a map
// of one host per partition is read back from the store, whole; every
// state in memory is written by SaveHostStates, more than a batch of
// them, and a map over the state reopened finds each; a host never seen
// has the zero state, and none is written for it.
func TestHostStatesOutlastMemoryAndRestart(t *testing.T) {
	dir := t.TempDir()
	d, _, err := Open(dir, 1, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	fail := func(err error) { t.Errorf("host state table: %v", err) }
	m := d.HostStates(1, fail)
	m.Update("a.test", func(st store.HostState) store.HostState { st.Accepted, st.NearCut = 7, true; return st })
	m.Update("b.test", func(st store.HostState) store.HostState { st.Throttled = 2; return st }) // evicts a.test
	if st, _ := m.Get("a.test"); st.Accepted != 7 || !st.NearCut {
		t.Fatalf("a.test read back after eviction: %+v", st)
	}
	big := d.HostStates(0, fail)
	for i := range hostStateBatch + 10 {
		big.Update(fmt.Sprintf("h%d.test", i), func(st store.HostState) store.HostState { st.LinksCut = int64(i + 1); return st })
	}
	if err := d.SaveHostStates(big); err != nil {
		t.Fatal(err)
	}
	if err := d.SaveHostStates(m); err != nil {
		t.Fatal(err)
	}
	d.Close()
	if d, _, err = Open(dir, 1, false, nil); err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	again := d.HostStates(0, fail)
	if st, _ := again.Get("b.test"); st.Throttled != 2 {
		t.Errorf("b.test after a restart: %+v", st)
	}
	for i := range hostStateBatch + 10 {
		if st, _ := again.Get(fmt.Sprintf("h%d.test", i)); st.LinksCut != int64(i+1) {
			t.Errorf("h%d.test after a restart: %+v, want LinksCut %d", i, st, i+1)
		}
	}
	if st, _ := again.Get("never.test"); st != (store.HostState{}) {
		t.Errorf("a host never seen: %+v", st)
	}
	if err := d.SaveHostStates(again); err != nil {
		t.Fatal(err)
	}
	if _, found, err := d.DB.GetHostState(0, "never.test"); found || err != nil {
		t.Errorf("a zero state written for a host never seen: found=%v err=%v", found, err)
	}
}
