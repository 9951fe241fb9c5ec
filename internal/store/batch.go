package store

import (
	"errors"
	"fmt"
	"strings"

	"github.com/cockroachdb/pebble/v2"
)

// Batch collects writes that Commit applies atomically: after a crash the
// store holds all of a committed batch or none of it. A Batch is not safe for
// concurrent use. Its write methods do not return errors: the first invalid
// write (a host that is empty or contains 0x00, an oversized robots.txt) is
// remembered, and Commit returns it without writing anything.
type Batch struct {
	db  *DB
	pb  *pebble.Batch // nil once committed or closed
	err error
	key []byte // scratch: pebble copies keys and values into the batch
	val []byte
	// queued is the queue entries the batch writes less those it deletes;
	// queueOps, that it touches the queues at all (queuecount.go).
	queued   int64
	queueOps bool
	// dueLows is the earliest entry the batch puts in each partition of
	// the recrawl index: Commit lowers those floors (duefloor.go).
	dueLows []dueLow
}

// NewBatch returns an empty batch.
func (db *DB) NewBatch() *Batch {
	b := &Batch{db: db}
	if db.closed.Load() {
		b.err = ErrClosed
		return b
	}
	b.pb = db.pdb.NewBatch()
	return b
}

func (b *Batch) fail(err error) {
	if b.err == nil {
		b.err = err
	}
}

func (b *Batch) ok() bool {
	if b.pb == nil {
		b.fail(errors.New("batch already committed or closed"))
		return false
	}
	return b.err == nil
}

func (b *Batch) set(key, val []byte) {
	if err := b.pb.Set(key, val, nil); err != nil {
		b.fail(fmt.Errorf("set %s: %w", fmtKey(key), err))
	}
}

func (b *Batch) del(key []byte) {
	if err := b.pb.Delete(key, nil); err != nil {
		b.fail(fmt.Errorf("delete %s: %w", fmtKey(key), err))
	}
}

// PutHost writes the record of r.Host.
func (b *Batch) PutHost(part uint16, r HostRecord) {
	if !b.ok() {
		return
	}
	if err := checkHost(r.Host); err != nil {
		b.fail(err)
		return
	}
	b.key = appendHostKey(b.key[:0], part, r.Host)
	b.val = appendHostRecord(b.val[:0], &r)
	b.set(b.key, b.val)
}

// PutRobots writes the robots.txt record of r.Host for r.Scheme, and
// deletes the host's record of the time before files were kept by scheme:
// that one's scheme is not known, so it is never read.
func (b *Batch) PutRobots(part uint16, r RobotsRecord) {
	if !b.ok() {
		return
	}
	if err := checkHost(r.Host); err != nil {
		b.fail(err)
		return
	}
	if r.Scheme == "" || strings.IndexByte(r.Scheme, hostEnd) >= 0 {
		b.fail(fmt.Errorf("robots.txt of host %q: invalid scheme %q", r.Host, r.Scheme))
		return
	}
	if len(r.Body) > MaxRobotsBody {
		b.fail(fmt.Errorf("robots.txt of host %q is %d bytes, more than %d", r.Host, len(r.Body), MaxRobotsBody))
		return
	}
	b.key = appendRobotsKey(b.key[:0], part, r.Host, "")
	b.del(b.key)
	b.key = appendRobotsKey(b.key[:0], part, r.Host, r.Scheme)
	b.val = appendRobotsRecord(b.val[:0], &r)
	b.set(b.key, b.val)
}

// PutURL writes the record of the URL with the given hash, which makes it
// seen.
func (b *Batch) PutURL(part uint16, host string, hash [16]byte, r URLRecord) {
	if !b.ok() {
		return
	}
	if err := checkHost(host); err != nil {
		b.fail(err)
		return
	}
	b.key = appendURLKey(b.key[:0], part, host, hash)
	b.val = appendURLRecord(b.val[:0], &r)
	b.set(b.key, b.val)
}

// PutMeta writes the meta value called name.
func (b *Batch) PutMeta(name string, v []byte) {
	if !b.ok() {
		return
	}
	b.key = appendMetaKey(b.key[:0], name)
	b.set(b.key, v)
}

// DeleteMeta removes the meta value called name.
func (b *Batch) DeleteMeta(name string) {
	if !b.ok() {
		return
	}
	b.key = appendMetaKey(b.key[:0], name)
	b.del(b.key)
}

// PushFront writes it at position seq of front queue prio. it.Host must be
// valid; it.Priority is stored as given (prio decides the queue).
func (b *Batch) PushFront(prio uint8, seq uint64, it QueueItem) {
	if !b.ok() {
		return
	}
	if err := checkHost(it.Host); err != nil {
		b.fail(fmt.Errorf("push front %s: %w", it.URL, err))
		return
	}
	b.key = appendFrontKey(b.key[:0], prio, seq)
	b.val = appendItem(b.val[:0], &it, true)
	b.set(b.key, b.val)
	b.queued++
	b.queueOps = true
}

// DeleteFront deletes position seq of front queue prio.
func (b *Batch) DeleteFront(prio uint8, seq uint64) {
	if !b.ok() {
		return
	}
	b.key = appendFrontKey(b.key[:0], prio, seq)
	b.del(b.key)
	b.queued--
	b.queueOps = true
}

// PushQueue writes it at position seq of host's back queue. The item's Host
// and Part are not stored: host and part are, in the key.
func (b *Batch) PushQueue(part uint16, host string, seq uint64, it QueueItem) {
	if !b.ok() {
		return
	}
	if err := checkHost(host); err != nil {
		b.fail(fmt.Errorf("push queue %s: %w", it.URL, err))
		return
	}
	b.key = appendQueueKey(b.key[:0], part, host, seq)
	b.val = appendItem(b.val[:0], &it, false)
	b.set(b.key, b.val)
	b.queued++
	b.queueOps = true
}

// DeleteQueue deletes position seq of host's back queue.
func (b *Batch) DeleteQueue(part uint16, host string, seq uint64) {
	if !b.ok() {
		return
	}
	if err := checkHost(host); err != nil {
		b.fail(err)
		return
	}
	b.key = appendQueueKey(b.key[:0], part, host, seq)
	b.del(b.key)
	b.queued--
	b.queueOps = true
}

// Len returns the number of operations in the batch.
func (b *Batch) Len() int {
	if b.pb == nil {
		return 0
	}
	return int(b.pb.Count())
}

// Commit applies the batch atomically and closes it. Once Commit(false)
// returns, the batch survives a process crash (it is in the WAL, in the
// kernel's page cache) but may be lost, whole, in a power failure; Commit(true)
// fsyncs the WAL first. If an earlier write to the batch was invalid, Commit
// writes nothing and returns that error. A failure to write the WAL leaves
// the DB refusing further use; close and reopen it.
func (b *Batch) Commit(sync bool) error {
	if b.pb == nil {
		if errors.Is(b.err, ErrClosed) {
			return fmt.Errorf("store %s: commit: %w", b.db.dir, b.err)
		}
		return fmt.Errorf("store %s: commit: batch already committed or closed", b.db.dir)
	}
	defer b.Close()
	if b.err != nil {
		return fmt.Errorf("store %s: commit: %w", b.db.dir, b.err)
	}
	if b.pb.Empty() {
		return nil
	}
	err := b.db.commit(b.pb, sync, b.queued, b.queueOps)
	// Once the entries are visible (lowering a floor is never wrong, so
	// even after a failed commit).
	for _, l := range b.dueLows {
		b.db.floors.lower(l.part, l.at)
	}
	return err
}

// commitReq is one Commit waiting in the group-commit queue.
type commitReq struct {
	pb       *pebble.Batch
	sync     bool
	queued   int64 // the batch's change to the queue count
	queueOps bool
	done     chan commitResult // buffered: the leader never blocks on it
}

type commitResult struct {
	err  error
	lead bool // the caller is now the leader and must commit its group
}

// maxGroupBytes bounds the batches one leader merges into one commit.
const maxGroupBytes = 4 << 20

// commit is a group commit, as in LevelDB: one caller at a time, the
// leader, commits the batches of every caller queued behind it as one
// pebble batch, then hands the lead to the next caller in the queue. Commits
// are thus serialised, which pebble needs for a failure to be reported
// cleanly (after a WAL error its commit pipeline is broken, and a commit
// already inside it would panic with pebble's lock held, or hang), while
// concurrent callers still share one WAL write and one wait for it.
func (db *DB) commit(pb *pebble.Batch, sync bool, queued int64, queueOps bool) error {
	req := &commitReq{pb: pb, sync: sync, queued: queued, queueOps: queueOps, done: make(chan commitResult, 1)}
	db.queueMu.Lock()
	db.queue = append(db.queue, req)
	if db.leading {
		db.queueMu.Unlock()
		r := <-req.done
		if !r.lead {
			return r.err
		}
		db.queueMu.Lock()
	}
	db.leading = true
	// req is at the head of the queue: take it and those behind it.
	n, size := 0, 0
	for n < len(db.queue) && (n == 0 || size+len(db.queue[n].pb.Repr()) <= maxGroupBytes) {
		size += len(db.queue[n].pb.Repr())
		n++
	}
	group := db.queue[:n:n]
	db.queue = db.queue[n:]
	db.queueMu.Unlock()

	err := db.commitGroup(group)
	for _, r := range group[1:] {
		r.done <- commitResult{err: err}
	}

	db.queueMu.Lock()
	if len(db.queue) > 0 {
		db.queue[0].done <- commitResult{lead: true}
	} else {
		db.leading = false
		db.queue = nil
	}
	db.queueMu.Unlock()
	return err
}

// commitGroup writes the batches of group as one.
func (db *DB) commitGroup(group []*commitReq) error {
	if err := db.usable(); err != nil {
		return err
	}
	pb, sync, ops := group[0].pb, group[0].sync, group[0].pb.Count()
	if len(group) > 1 {
		size := 0
		for _, r := range group {
			size += len(r.pb.Repr())
		}
		pb = db.pdb.NewBatchWithSize(size)
		defer pb.Close()
		for _, r := range group {
			if err := pb.Apply(r.pb, nil); err != nil {
				return fmt.Errorf("store %s: commit: merge batches: %w", db.dir, err)
			}
			sync = sync || r.sync
		}
		ops = pb.Count()
	}
	// The queue count goes in the batch that changes the queues.
	count, err := db.countQueued(pb, group)
	if err != nil {
		return fmt.Errorf("store %s: commit: queue count: %w", db.dir, err)
	}
	if sync {
		db.realSyncs.Add(1)
		defer db.realSyncs.Add(-1)
	}
	// pebble.Sync waits until the WAL writer has written the record; walFS
	// decides whether the sync after it is an fsync.
	err = apply(pb, pebble.Sync)
	if err == nil {
		db.counted(count)
		return nil
	}
	var fe *fatalError
	fatal := errors.As(err, &fe)
	err = fmt.Errorf("store %s: commit batch of %d ops: %w", db.dir, ops, err)
	if fatal {
		db.failed.CompareAndSwap(nil, &err)
	}
	return err
}

// apply commits pb, turning pebble's fatal commit error (see fatalError)
// into an error.
func apply(pb *pebble.Batch, opts *pebble.WriteOptions) (err error) {
	defer func() {
		if r := recover(); r != nil {
			fe, ok := r.(*fatalError)
			if !ok {
				panic(r)
			}
			err = fe
		}
	}()
	return pb.Commit(opts)
}

// Close discards the batch if it has not been committed. It may be called
// more than once, and after Commit.
func (b *Batch) Close() {
	if b.pb == nil {
		return
	}
	_ = b.pb.Close() // a batch's Close only returns it to a pool
	b.pb = nil
}
