// Package store keeps the crawl's durable state in one pebble database, keyed
// by host partition, so that a host's records of each kind are contiguous on
// disk and a partition can be scanned, handed over or rebuilt on its own.
//
// # Key layout
//
// Every key starts with a one-byte table tag. part is the host's partition
// (internal/partition.Of, computed by the caller) as a big-endian uint16;
// seq is a big-endian uint64, so byte order is numeric order.
//
//	Meta:  'M' name                                  -> raw bytes
//	Host:  'H' part host 0x00                        -> HostRecord (the host's clock)
//	Robots:'R' part host 0x00 scheme                 -> RobotsRecord (its last robots.txt answer for scheme)
//	URL:   'U' part host 0x00 hash[16]               -> URLRecord (also the exact seen set)
//	Queue: 'Q' part host 0x00 seq                    -> QueueItem (a host's back-queue tail, in order)
//	Front: 'F' prio seq                              -> QueueItem with its host and part (the priority front queues, FIFO by seq)
//	Digest:'D' sha1[20]                              -> DigestRecord (where a payload was first archived)
//	Capture:'C' urlkey 0x00 time                     -> CaptureRecord (the capture index, in CDX order; see capture.go)
//	Next:  'N' part due[8] host 0x00 hash[16]        -> DueEntry (the recrawl index, in due order; see package schedule)
//	Prior: 'P' part host 0x00                        -> PriorRecord (a host's pooled change history; see prior.go)
//
// The 0x00 after the host ends it: a host name never contains 0x00 (writes of
// one fail), and 0x00 sorts below every byte a host may contain, so the keys
// of "a.test" form one range that the keys of "a.test.evil" never enter. Within
// a table, the keys of one partition are one range, and within it the keys of
// one host are one range, queue entries in seq order.
//
// # Values
//
// Values are a version byte followed by uvarints, varints and
// uvarint-length-prefixed strings (encoding/binary Append* functions); times
// are Unix nanoseconds, the zero time 0. A record whose version byte is newer
// than this build understands is reported as such, and any other malformed
// value is an error naming its key, never a panic. Queue values omit the host
// and partition, which their key carries.
//
// # Durability
//
// All writes go through a Batch, which commits atomically. Commit(false)
// returns once the batch is in pebble's write-ahead log in the kernel's page
// cache, without fsync: a process that is killed (SIGKILL, panic, OOM) loses
// nothing that Commit returned for, while a power failure may lose the most
// recent such batches, whole, never part of one. Commit(true) also fsyncs the
// WAL, which makes every earlier batch durable too.
//
// pebble itself does not give the first guarantee with pebble.NoSync: its WAL
// writer buffers records in memory and writes them from a background
// goroutine, so a NoSync commit can return before its record reaches the
// kernel. Commits therefore always use pebble.Sync, on a filesystem wrapper
// whose WAL syncs are real only while a Commit(true) is in flight (walfs.go);
// a lazily synced WAL is fsynced when pebble closes it, before the next one
// starts, as pebble's recovery requires. Commits are serialised, with
// concurrent ones merged into one write (group commit), so that a failed one
// is reported to its callers: after it the DB refuses all further use; close
// and reopen it, and the store is what the last successful commits left.
//
// # Queues and tombstones
//
// Front and back queues are pushed at the tail and consumed from the head, so
// each consumed entry leaves a deletion tombstone until compaction drops it.
// Readers never walk them on the hot path: FrontRange and QueueRange take the
// queue's head (from) as the iterator's lower bound and land on the first live
// entry at once, however many tombstones lie below it, and the last-seq
// lookups iterate backwards from the tail, where there are none. What does walk
// tombstones is a read of a queue from seq 0, a last-seq lookup on a drained
// queue, QueuedHosts over drained hosts, and the counts; they belong to
// restarts and stats, not to the per-URL path. BenchmarkQueueChurn measures
// both after a million push/consume cycles: reading 100 entries from the head
// takes about 40 µs, as on a fresh queue, while a last-seq lookup on the
// drained queue takes about 0.25 ms. Consuming with one range deletion per
// consumed batch instead made every read slower (from-head 40% slower, the
// drained lookup 20 times slower), so the store uses point deletions only.
package store

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// memTableStopWrites is how many memtables may exist (one being written,
// the others waiting to be flushed) before writes stall: more than pebble's
// default of 2, because on two cores a flush can fall behind a burst.
const memTableStopWrites = 4

// Defaults for zero Options fields.
const (
	DefaultCacheSize       = 64 << 20
	DefaultMemTableSize    = 32 << 20
	DefaultBloomBitsPerKey = 10
)

// Options configures Open. The zero value (or a nil *Options) is usable.
type Options struct {
	// CacheSize is the size of the block cache in bytes. Zero means 64 MiB.
	// The store's memory is about CacheSize + 4*MemTableSize.
	CacheSize int64
	// MemTableSize is the size of one memtable in bytes: writes go to it and
	// are flushed to an sstable when it is full. Up to four exist at once.
	// Zero means 32 MiB.
	MemTableSize uint64
	// BloomBitsPerKey sizes the bloom filter written for every sstable on
	// every level, which lets a point lookup of an absent URL skip tables
	// without reading them. Zero means 10 (about 1% false positives).
	BloomBitsPerKey int
	// FS is the filesystem. Nil means the real disk; tests pass vfs.NewMem()
	// or an errorfs-wrapped FS.
	FS vfs.FS
	// ReadOnly opens an existing store without writing to it; committing a
	// batch then fails.
	ReadOnly bool
	// Fresh empties the directory before opening it, under the store's
	// lock: the store starts over, and a directory another process holds
	// is refused (InUseError) before anything in it is touched. Not with
	// ReadOnly.
	Fresh bool
	// Logger receives pebble's messages: informational ones at Debug level,
	// background errors at Error. Nil discards them.
	Logger *slog.Logger
	// SyncCountLimit is the most queue entries a state without a queue
	// count (one written before counts were kept) may hold for Open to
	// count them itself; more are counted in the background, and Queued
	// says so until they are. Zero means 100,000; a negative limit counts
	// every such state in the background.
	SyncCountLimit int64

	// countWalk, if set, is called as the background count starts, with
	// the context Close cancels (for tests: a walk Close must stop).
	countWalk func(context.Context)
}

// Validate reports the first invalid field.
func (o *Options) Validate() error {
	if o == nil {
		return nil
	}
	if o.CacheSize < 0 {
		return fmt.Errorf("store: cache size %d is negative", o.CacheSize)
	}
	if o.MemTableSize != 0 && o.MemTableSize < 1<<20 {
		return fmt.Errorf("store: memtable size %d is below 1 MiB", o.MemTableSize)
	}
	if o.MemTableSize >= 4<<30 {
		return fmt.Errorf("store: memtable size %d must be below 4 GiB", o.MemTableSize)
	}
	if o.BloomBitsPerKey < 0 || o.BloomBitsPerKey > 64 {
		return fmt.Errorf("store: bloom bits per key %d must be in [0, 64]", o.BloomBitsPerKey)
	}
	if o.Fresh && o.ReadOnly {
		return errors.New("store: Fresh and ReadOnly together: a read-only store cannot start over")
	}
	return nil
}

// DB is the store. Its methods are safe for concurrent use, except Close,
// which must not race with any other call. A Batch is for one goroutine.
type DB struct {
	dir  string
	pdb  *pebble.DB
	log  *slog.Logger
	fs   vfs.FS
	lock *pebble.Lock // the directory's, taken before pebble opens it (owner.go)
	note bool         // this DB wrote the owner note, which Close removes

	trimStop chan struct{} // closed by Close: the malloc trimmer stops
	trimWG   sync.WaitGroup

	syncCountLimit int64                 // Options.SyncCountLimit, 0 for none
	countWalk      func(context.Context) // Options.countWalk

	// The group-commit queue (see commit).
	queueMu sync.Mutex
	queue   []*commitReq
	leading bool

	realSyncs atomic.Int64 // synced commits in flight; see walFS

	qc       queueCount // the queue count (queuecount.go)
	floors   dueFloors  // the recrawl index's floors (duefloor.go)
	readOnly bool

	closed atomic.Bool
	// failed holds the first commit error; once set the DB refuses all use,
	// because pebble's commit pipeline is not usable after a WAL failure and
	// the in-memory view may hold a batch the disk does not.
	failed atomic.Pointer[error]
}

// ErrClosed is returned (wrapped) by calls on a closed DB or Batch.
var ErrClosed = errors.New("store: closed")

// ErrFailed is returned (wrapped) by every call after a commit has failed.
var ErrFailed = errors.New("store: unusable after a failed commit; close and reopen")

// Dir is where a crawl keeps its store under its data directory.
func Dir(dataDir string) string { return filepath.Join(dataDir, "state") }

// Open opens the store in dir, creating dir and an empty store if needed
// (unless opts.ReadOnly). A directory another process (or another DB of
// this one) holds open is an *InUseError, which says who holds it.
func Open(dir string, opts *Options) (_ *DB, err error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.CacheSize == 0 {
		o.CacheSize = DefaultCacheSize
	}
	if o.MemTableSize == 0 {
		o.MemTableSize = DefaultMemTableSize
	}
	if o.BloomBitsPerKey == 0 {
		o.BloomBitsPerKey = DefaultBloomBitsPerKey
	}
	if o.FS == nil {
		o.FS = vfs.Default
	}
	db := &DB{dir: dir}
	switch {
	case o.SyncCountLimit == 0:
		db.syncCountLimit = 100_000
	case o.SyncCountLimit > 0:
		db.syncCountLimit = o.SyncCountLimit
	}
	db.countWalk = o.countWalk
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	log = log.With("store", dir)

	if !o.ReadOnly {
		if err := o.FS.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("store: create %s: %w", dir, err)
		}
	}
	if db.lock, err = lockDir(o.FS, dir); err != nil {
		return nil, err
	}
	db.fs = o.FS
	defer func() {
		if err != nil {
			db.unlock()
		}
	}()
	if o.Fresh {
		if err := wipe(o.FS, dir); err != nil {
			return nil, err
		}
	}
	// The note only helps the next process's error: one that cannot be
	// written (a read-only directory) is no reason not to open.
	if nerr := writeOwner(o.FS, dir, time.Now()); nerr != nil {
		log.Warn("store: cannot write the owner note", "err", nerr)
	} else {
		db.note = true
	}

	// pebble charges every live memtable to the block cache (Cache.Reserve):
	// with a 64 MiB cache and two 32 MiB memtables, no block would stay
	// cached and every lookup would read the filter and index blocks from
	// the file. Size the cache so that CacheSize is left for blocks.
	cache := pebble.NewCache(o.CacheSize + memTableStopWrites*int64(o.MemTableSize))
	// The DB takes its own reference; ours goes when Open returns.
	defer cache.Unref()

	po := &pebble.Options{
		FS:                          &walFS{FS: o.FS, realSyncs: &db.realSyncs},
		Cache:                       cache,
		MemTableSize:                o.MemTableSize,
		MemTableStopWritesThreshold: memTableStopWrites,
		// Compact L0 at 4 sublevels (pebble's default: every lookup merges
		// each sublevel) but stall writes only at 24, twice the default: on
		// two cores a burst of enqueues can outrun compaction for a while,
		// and a stall stops the whole crawl.
		L0CompactionThreshold: 4,
		L0StopWritesThreshold: 24,
		// Lbase about as large as L0 at its compaction trigger.
		LBaseMaxBytes:              4 * int64(o.MemTableSize),
		CompactionConcurrencyRange: func() (int, int) { return 1, 2 },
		ReadOnly:                   o.ReadOnly,
		ErrorIfNotExists:           o.ReadOnly,
		Lock:                       db.lock,
		Logger:                     (*pebbleLogger)(log),
		EventListener:              eventListener(log),
	}
	if !o.ReadOnly {
		po.FormatMajorVersion = pebble.FormatNewest
	}
	for i := range po.Levels {
		po.Levels[i].FilterPolicy = bloom.FilterPolicy(o.BloomBitsPerKey)
		po.Levels[i].FilterType = pebble.TableFilter
	}

	gate := newCompactionGate()
	po.Experimental.CompactionScheduler = gate
	pdb, err := openPebble(dir, po)
	if err != nil {
		gate.Unregister() // pebble does not, when Open fails after registering it
		return nil, fmt.Errorf("store: open %s: %w", dir, err)
	}
	gate.release()
	db.pdb, db.log, db.readOnly = pdb, log, o.ReadOnly
	if err := db.loadQueued(); err != nil {
		pdb.Close()
		return nil, err
	}
	db.startTrimming()
	return db, nil
}

// startTrimming hands the C allocator's free memory back to the system
// every trimEvery while the store is open (see malloc_cgo.go).
func (db *DB) startTrimming() {
	if trimEvery == 0 {
		return
	}
	db.trimStop = make(chan struct{})
	db.trimWG.Go(func() {
		t := time.NewTicker(trimEvery)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				trimMalloc()
			case <-db.trimStop:
				return
			}
		}
	})
}

// openPebble opens pebble, turning a fatal log call during recovery (a
// corrupt MANIFEST can cause one) into an error.
func openPebble(dir string, po *pebble.Options) (pdb *pebble.DB, err error) {
	defer func() {
		if r := recover(); r != nil {
			fe, ok := r.(*fatalError)
			if !ok {
				panic(r)
			}
			err = fe
		}
	}()
	return pebble.Open(dir, po)
}

// Dir returns the directory the store was opened in.
func (db *DB) Dir() string { return db.dir }

// Close closes the store. Batches not committed are discarded.
func (db *DB) Close() error {
	if db.closed.Swap(true) {
		return fmt.Errorf("store %s: close: %w", db.dir, ErrClosed)
	}
	db.stopCounting()
	if db.trimStop != nil {
		close(db.trimStop)
		db.trimWG.Wait()
	}
	err := db.pdb.Close()
	db.unlock()
	if err != nil {
		return fmt.Errorf("store %s: close: %w", db.dir, err)
	}
	return nil
}

// unlock removes the owner note, while the lock still keeps others out,
// and then lets the lock go.
func (db *DB) unlock() {
	if db.note {
		db.fs.Remove(db.fs.PathJoin(db.dir, ownerNote))
		db.note = false
	}
	db.lock.Close()
}

// DiskSize returns the bytes the store occupies on disk: sstables, WAL,
// manifest and files awaiting deletion, from pebble's metrics.
func (db *DB) DiskSize() (int64, error) {
	if err := db.usable(); err != nil {
		return 0, err
	}
	m := db.pdb.Metrics()
	// WAL.PhysicalSize counts the current WAL at the size it had when it was
	// opened (zero for a new one), so DiskSpaceUsage misses everything
	// written since; WAL.Size is the live WALs' logical size, which is
	// current.
	return int64(m.DiskSpaceUsage() - m.WAL.PhysicalSize + max(m.WAL.PhysicalSize, m.WAL.Size)), nil
}

// Flush writes the memtable to an sstable (for tests and size reports).
func (db *DB) Flush() error {
	if err := db.usable(); err != nil {
		return err
	}
	if err := db.pdb.Flush(); err != nil {
		return fmt.Errorf("store %s: flush: %w", db.dir, err)
	}
	return nil
}

// usable returns an error if the DB is closed or has failed.
func (db *DB) usable() error {
	if db.closed.Load() {
		return fmt.Errorf("store %s: %w", db.dir, ErrClosed)
	}
	if p := db.failed.Load(); p != nil {
		return fmt.Errorf("store %s: %w (first failure: %w)", db.dir, ErrFailed, *p)
	}
	return nil
}

// fatalError is what pebbleLogger.Fatalf panics with. pebble calls Fatalf
// where it cannot go on (a WAL write that failed during a commit, a MANIFEST
// that cannot be written) and expects it not to return; the default logger
// exits the process. Panicking instead lets Commit and Open, which run on the
// caller's goroutine, turn it into an error; on a background goroutine it
// still ends the process, as pebble intends.
type fatalError struct {
	msg string
	err error // the first error among Fatalf's arguments, if any
}

func (e *fatalError) Error() string { return e.msg }
func (e *fatalError) Unwrap() error { return e.err }

// pebbleLogger sends pebble's messages to slog instead of the standard
// logger (stderr).
type pebbleLogger slog.Logger

func (l *pebbleLogger) Infof(format string, args ...any) {
	(*slog.Logger)(l).Debug(fmt.Sprintf(format, args...))
}

func (l *pebbleLogger) Errorf(format string, args ...any) {
	(*slog.Logger)(l).Error(fmt.Sprintf(format, args...))
}

func (l *pebbleLogger) Fatalf(format string, args ...any) {
	fe := &fatalError{msg: fmt.Sprintf(format, args...)}
	for _, a := range args {
		if err, ok := a.(error); ok {
			fe.err = err
			break
		}
	}
	(*slog.Logger)(l).Error("pebble fatal error", "err", fe.msg)
	panic(fe)
}

// eventListener reports the events an operator must see. pebble's default
// for data corruption is a fatal log; the read that found it already returns
// the error, so here it is logged.
func eventListener(log *slog.Logger) *pebble.EventListener {
	return &pebble.EventListener{
		BackgroundError: func(err error) {
			log.Error("pebble background error", "err", err)
		},
		DataCorruption: func(info pebble.DataCorruptionInfo) {
			log.Error("pebble data corruption", "path", info.Path, "err", info.Details)
		},
		WriteStallBegin: func(info pebble.WriteStallBeginInfo) {
			log.Warn("pebble write stall", "reason", info.Reason)
		},
		WriteStallEnd: func() {
			log.Info("pebble write stall ended")
		},
	}
}
