package store

import (
	"encoding/binary"
	"fmt"

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
// host's tail. A state written before the count was kept is counted once,
// by walking its queues, when it is opened.
const metaQueued = "queue/count"

// Queued returns the number of queue entries, front and back.
func (db *DB) Queued() int64 { return db.queued.Load() }

// loadQueued reads the queue count, or counts the queues of a state that
// has none and writes it.
func (db *DB) loadQueued() error {
	v, found, err := db.GetMeta(metaQueued)
	if err != nil {
		return err
	}
	if found {
		n, k := binary.Varint(v)
		if k <= 0 {
			return fmt.Errorf("store %s: bad queue count %x", db.dir, v)
		}
		db.queued.Store(n)
		return nil
	}
	var n int64
	for _, tag := range []byte{tagFront, tagQueue} {
		err := db.scan("count queues", []byte{tag}, []byte{tag + 1}, func(*pebble.Iterator) (bool, error) { n++; return true, nil })
		if err != nil {
			return err
		}
	}
	db.queued.Store(n)
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

// countQueued adds the group's queue changes to the count and writes it
// into pb, the batch that commits them. It returns the new count, which
// the caller stores once pb has committed.
func (db *DB) countQueued(pb *pebble.Batch, group []*commitReq) (int64, bool, error) {
	var d int64
	changed := false
	for _, r := range group {
		if r.queued != 0 || r.queueOps {
			changed = true
		}
		d += r.queued
	}
	if !changed {
		return 0, false, nil
	}
	n := db.queued.Load() + d
	if err := pb.Set(appendMetaKey(nil, metaQueued), binary.AppendVarint(nil, n), nil); err != nil {
		return 0, false, err
	}
	return n, true, nil
}
