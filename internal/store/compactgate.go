package store

import (
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// compactionGate is pebble's compaction scheduler with one change: it
// grants nothing until the store is open. pebble.Open waits for every
// compaction in progress before it returns (it scans for obsolete files
// with compactions stopped), and a flush during Open starts one when L0 is
// deep, as a store an enqueue burst just filled is: a restart waited for a
// whole L0 compaction, seconds, before it could read its queues. Held
// until Open returns, the compactions are merely picked a little later, by
// the same rule as pebble's own scheduler (ConcurrencyLimitScheduler,
// whose constructor pebble does not export): as many at a time as the DB
// allows without permission, sampled at every grant, every Done and every
// 100 ms.
type compactionGate struct {
	db DBForCompaction

	mu        sync.Mutex
	open      bool // set once pebble.Open has returned
	closed    bool
	running   int
	granting  bool
	grantDone *sync.Cond

	registered bool // Register has started the periodic grants
	stopOnce   sync.Once
	stop       chan struct{}
	poke       chan struct{}
	done       chan struct{}
}

// DBForCompaction is what pebble gives a compaction scheduler.
type DBForCompaction = pebble.DBForCompaction

var _ pebble.CompactionScheduler = (*compactionGate)(nil)

func newCompactionGate() *compactionGate {
	g := &compactionGate{stop: make(chan struct{}), poke: make(chan struct{}, 1), done: make(chan struct{})}
	g.grantDone = sync.NewCond(&g.mu)
	return g
}

// Register implements pebble.CompactionScheduler.
func (g *compactionGate) Register(_ int, db pebble.DBForCompaction) {
	g.db = db
	g.registered = true
	go g.periodic()
}

// Unregister implements pebble.CompactionScheduler. The store also calls
// it when pebble.Open failed, which may have registered the gate or not.
func (g *compactionGate) Unregister() {
	g.stopOnce.Do(func() {
		close(g.stop)
		if g.registered {
			<-g.done
		}
	})
	g.mu.Lock()
	defer g.mu.Unlock()
	g.closed = true
	for g.granting {
		g.grantDone.Wait()
	}
}

// release lets compactions run: the store is open.
func (g *compactionGate) release() {
	g.mu.Lock()
	g.open = true
	g.mu.Unlock()
	select {
	case g.poke <- struct{}{}:
	default:
	}
}

// TrySchedule implements pebble.CompactionScheduler.
func (g *compactionGate) TrySchedule() (bool, pebble.CompactionGrantHandle) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed || !g.open {
		return false, nil
	}
	if g.db.GetAllowedWithoutPermission() > g.running {
		g.running++
		return true, g
	}
	return false, nil
}

// UpdateGetAllowedWithoutPermission implements pebble.CompactionScheduler.
func (g *compactionGate) UpdateGetAllowedWithoutPermission() {
	select {
	case g.poke <- struct{}{}:
	default:
	}
}

// Started, MeasureCPU, CumulativeStats and Done implement
// pebble.CompactionGrantHandle.
func (g *compactionGate) Started()                                          {}
func (g *compactionGate) MeasureCPU(pebble.CompactionGoroutineKind)         {}
func (g *compactionGate) CumulativeStats(pebble.CompactionGrantHandleStats) {}
func (g *compactionGate) Done() {
	g.mu.Lock()
	g.running--
	g.mu.Unlock()
	g.grant()
}

// grant grants what the DB allows to the compactions it has waiting.
func (g *compactionGate) grant() {
	g.mu.Lock()
	for g.granting {
		g.grantDone.Wait()
	}
	if g.closed || !g.open {
		g.mu.Unlock()
		return
	}
	n := g.db.GetAllowedWithoutPermission() - g.running
	if n <= 0 {
		g.mu.Unlock()
		return
	}
	g.granting = true
	g.mu.Unlock()
	for ; n > 0; n-- {
		if waiting, _ := g.db.GetWaitingCompaction(); !waiting || !g.db.Schedule(g) {
			break
		}
		g.mu.Lock()
		g.running++
		g.mu.Unlock()
	}
	g.mu.Lock()
	g.granting = false
	g.grantDone.Broadcast()
	g.mu.Unlock()
}

func (g *compactionGate) periodic() {
	defer close(g.done)
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-g.stop:
			return
		case <-t.C:
		case <-g.poke:
		}
		g.grant()
	}
}
