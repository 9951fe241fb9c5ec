package state

import (
	"fmt"

	"github.com/weft-crawler/weft/internal/hostmap"
	"github.com/weft-crawler/weft/internal/partition"
	"github.com/weft-crawler/weft/internal/store"
)

// HostStates returns the per-host states: counters (the URLs accepted
// for the host cap, its 429s and 5xxs, its pages cut at the link cap) and
// what the per-host rules learnt (the near-duplicate trap's window and
// cut, the index alias pairs), at most bound hosts of them in memory: a
// host evicted, or one of an earlier run, is read back from the store's
// host state table, and every host in memory is written there at close
// (SaveHostStates), so that they go on across a restart instead of
// starting again from zero. A read or write that fails is given to fail.
func (d *State) HostStates(bound int, fail func(error)) *hostmap.Map[store.HostState] {
	return hostmap.NewBounded[store.HostState](d.parts, bound, hostStateTable{d, fail})
}

// hostStateTable is the store's host state table, where the per-host
// states live out of memory.
type hostStateTable struct {
	d    *State
	fail func(error)
}

func (t hostStateTable) Load(host string) store.HostState {
	st, _, err := t.d.DB.GetHostState(uint16(partition.Of(host, t.d.parts)), host)
	if err != nil {
		t.fail(fmt.Errorf("state: read the state of host %s: %w", host, err))
	}
	return st
}

func (t hostStateTable) Save(host string, st store.HostState) {
	if st == (store.HostState{}) {
		return
	}
	b := t.d.DB.NewBatch()
	b.PutHostState(uint16(partition.Of(host, t.d.parts)), host, st)
	if err := b.Commit(false); err != nil {
		t.fail(fmt.Errorf("state: record the state of host %s: %w", host, err))
	}
}

// hostStateBatch is how many host states SaveHostStates writes per batch.
const hostStateBatch = 4096

// SaveHostStates writes every host state in memory to the store, as the
// map's flush would, but a few thousand to a batch rather than one: at
// close the map holds up to --host-cache hosts.
func (d *State) SaveHostStates(states *hostmap.Map[store.HostState]) error {
	b, n := d.DB.NewBatch(), 0
	var err error
	states.Each(func(host string, st store.HostState) {
		if err != nil || st == (store.HostState{}) {
			return
		}
		b.PutHostState(uint16(partition.Of(host, d.parts)), host, st)
		if n++; n == hostStateBatch {
			err = b.Commit(false)
			b, n = d.DB.NewBatch(), 0
		}
	})
	if err == nil && n > 0 {
		err = b.Commit(false)
	}
	if err != nil {
		return fmt.Errorf("state: record the hosts' states: %w", err)
	}
	return nil
}
