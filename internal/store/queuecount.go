package store

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"
)

// The queue count: how many entries the queues hold, front and back, kept
// in the metadata so that a restarted crawl knows its queue depth at once
// rather than as it reads its queues back.
//
// Each batch counts the queue entries it writes (+1) and deletes (-1); the
// group commit, which applies batches one group at a time, adds the
// group's sum to the count and writes it in the same pebble batch as the
// entries. The count on disk therefore always matches the entries on disk,
// after a crash too (a pebble batch is recovered whole or not at all). It
// is exact as long as every entry deleted existed, which the crawl keeps:
// an entry is deleted once, by the lease that took it or the move to its
// host's tail.
//
// A state written before the count was kept is counted once, in the
// background so that the open does not wait for it (seconds for millions
// of entries): the entries of a snapshot taken at the open are walked,
// while the commits after it count their changes from zero; the walk's
// total is then added in by the commit leader, which writes the count from
// the next commit on. Until then Queued reports it unknown, and a crash
// before leaves the state without a count, to be counted again.
const metaQueued = "queue/count"

// queueCount is the DB's queue count and its background walk.
type queueCount struct {
	n        atomic.Int64 // written by the commit leader only
	counting atomic.Bool  // the walk of a state without a count is not done
	walked   atomic.Int64 // the walk's total, for the leader to add in; -1 once added
	stop     context.CancelFunc
	wg       sync.WaitGroup
	// The count's key, and the commit leader's scratch for its value:
	// pebble copies both into the batch.
	key, val []byte
}

// Queued returns the number of queue entries, front and back; ok is false
// while a state written without a count is being counted.
func (db *DB) Queued() (n int64, ok bool) {
	if db.qc.counting.Load() {
		return 0, false
	}
	return db.qc.n.Load(), true
}

// loadQueued reads the queue count, or starts counting the queues of a
// state that has none.
func (db *DB) loadQueued() error {
	db.qc.walked.Store(-1)
	v, found, err := db.GetMeta(metaQueued)
	if err != nil {
		return err
	}
	if found {
		n, k := binary.Varint(v)
		if k <= 0 {
			return fmt.Errorf("store %s: bad queue count %x", db.dir, v)
		}
		db.qc.n.Store(n)
		return nil
	}
	snap := db.pdb.NewSnapshot()
	// A small state (a new one) is counted at once.
	if n, all, err := countSnapshot(context.Background(), snap, db.syncCountLimit); err != nil {
		snap.Close()
		return err
	} else if all {
		snap.Close()
		db.qc.n.Store(n)
		if db.readOnly {
			return nil
		}
		b := db.pdb.NewBatch()
		defer b.Close()
		b.Set(appendMetaKey(nil, metaQueued), binary.AppendVarint(nil, n), nil)
		if err := b.Commit(pebble.Sync); err != nil {
			return fmt.Errorf("store %s: write the queue count: %w", db.dir, err)
		}
		return nil
	}
	db.qc.counting.Store(true)
	ctx, stop := context.WithCancel(context.Background())
	db.qc.stop = stop
	db.qc.wg.Go(func() {
		defer snap.Close()
		if db.countWalk != nil {
			db.countWalk(ctx)
		}
		n, _, err := countSnapshot(ctx, snap, -1)
		if err != nil {
			if ctx.Err() == nil {
				db.log.Warn("store: counting the queues of a state without a count failed; the queue depth stays unknown", "err", err)
			}
			return
		}
		if ctx.Err() != nil {
			return // closing: the next open counts again
		}
		db.qc.walked.Store(n)
		if db.readOnly {
			db.qc.n.Add(n) // no commits: nothing else writes it
			db.qc.walked.Store(-1)
			db.qc.counting.Store(false)
			return
		}
		// An empty commit that touches the queues: its leader adds the
		// walk in and writes the count.
		b := db.NewBatch()
		b.queueOps = true
		if b.pb == nil {
			return
		}
		if err := db.commit(b.pb, true, 0, true); err != nil && ctx.Err() == nil {
			db.log.Warn("store: writing the queue count failed; the queue depth stays unknown", "err", err)
		}
		b.Close()
	})
	return nil
}

// countSnapshot walks the queue entries of snap, up to limit of them (-1:
// all); all is false if it stopped at the limit.
func countSnapshot(ctx context.Context, snap *pebble.Snapshot, limit int64) (n int64, all bool, err error) {
	for _, tag := range []byte{tagFront, tagQueue} {
		it, err := snap.NewIter(&pebble.IterOptions{LowerBound: []byte{tag}, UpperBound: []byte{tag + 1}})
		if err != nil {
			return 0, false, err
		}
		for ok := it.First(); ok; ok = it.Next() {
			n++
			if limit >= 0 && n > limit {
				return n, false, it.Close()
			}
			if n%65536 == 0 && ctx.Err() != nil {
				it.Close()
				return 0, false, ctx.Err()
			}
		}
		if err := it.Close(); err != nil {
			return 0, false, err
		}
	}
	return n, true, nil
}

// stopCounting stops a walk in progress, before the store closes.
func (db *DB) stopCounting() {
	if db.qc.stop != nil {
		db.qc.stop()
	}
	db.qc.wg.Wait()
}

// countQueued adds the group's queue changes to the count, and the walk's
// total once it is known, and writes the count into pb, the batch that
// commits them, unless a walk is still going on. It returns the new count,
// which the caller stores once pb has committed. Only the commit leader
// calls it.
func (db *DB) countQueued(pb *pebble.Batch, group []*commitReq) (c groupCount, err error) {
	var d int64
	changed := false
	for _, r := range group {
		if r.queued != 0 || r.queueOps {
			changed = true
		}
		d += r.queued
	}
	walked := db.qc.walked.Load()
	if !changed && walked < 0 {
		return groupCount{}, nil
	}
	c = groupCount{n: db.qc.n.Load() + d, changed: true, walked: walked >= 0}
	if c.walked {
		c.n += walked
	}
	if c.walked || !db.qc.counting.Load() {
		if db.qc.key == nil {
			db.qc.key = appendMetaKey(nil, metaQueued)
		}
		db.qc.val = binary.AppendVarint(db.qc.val[:0], c.n)
		if err := pb.Set(db.qc.key, db.qc.val, nil); err != nil {
			return groupCount{}, err
		}
	}
	return c, nil
}

// groupCount is what countQueued made of a group: the new count, whether
// it changed, and whether the walk's total went into it.
type groupCount struct {
	n       int64
	changed bool
	walked  bool
}

// counted stores the count after the group that countQueued wrote it
// into has committed.
func (db *DB) counted(c groupCount) {
	if !c.changed {
		return
	}
	db.qc.n.Store(c.n)
	if c.walked {
		db.qc.walked.Store(-1)
		db.qc.counting.Store(false)
	}
}
