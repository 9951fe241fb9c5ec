package store

import (
	"strings"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// Why this file exists. pebble's WAL writer buffers records in memory and
// writes them to the file from a background goroutine; a commit with
// pebble.NoSync returns before its record has reached the kernel, so a
// process killed right after Commit can lose it (TestProcessCrash caught
// exactly that). A commit with pebble.Sync waits until its record is written
// and the file synced. walFS makes that sync lazy: every commit waits for the
// write(2), which is all a process crash needs, and only a Commit(true) pays
// for fsync.
//
// A lazy sync is made good when the WAL file is closed: pebble closes the
// previous WAL (and expects it to be durable, with a clean tail) before it
// starts the next one, so only the newest WAL can ever end torn, which
// recovery tolerates.

// walFS wraps an FS, handing out walFiles for WAL files.
type walFS struct {
	vfs.FS
	// realSyncs counts the Commit(true) calls in flight; while it is
	// positive a WAL sync is a real one. A synced commit's record is written
	// after it raised the count and synced before it lowers it, so the sync
	// that covers the record always sees the count raised.
	realSyncs *atomic.Int64
}

func isWAL(name string) bool { return strings.HasSuffix(name, ".log") }

func (fs *walFS) wrap(name string, f vfs.File, err error) (vfs.File, error) {
	if err != nil || !isWAL(name) {
		return f, err
	}
	return &walFile{File: f, realSyncs: fs.realSyncs}, nil
}

func (fs *walFS) Create(name string, category vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.Create(name, category)
	return fs.wrap(name, f, err)
}

func (fs *walFS) ReuseForWrite(oldname, newname string, category vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.ReuseForWrite(oldname, newname, category)
	return fs.wrap(newname, f, err)
}

func (fs *walFS) OpenReadWrite(name string, category vfs.DiskWriteCategory, opts ...vfs.OpenOption) (vfs.File, error) {
	f, err := fs.FS.OpenReadWrite(name, category, opts...)
	return fs.wrap(name, f, err)
}

// Unwrap lets vfs.Root see the FS underneath.
func (fs *walFS) Unwrap() vfs.FS { return fs.FS }

// walFile is a WAL file whose syncs are real only for synced commits.
type walFile struct {
	vfs.File
	realSyncs *atomic.Int64
	// dirty is set when a sync was skipped; Close then syncs for real.
	// pebble's WAL writer syncs from one goroutine at a time.
	dirty atomic.Bool
}

func (f *walFile) lazy() bool {
	if f.realSyncs.Load() > 0 {
		f.dirty.Store(false)
		return false
	}
	f.dirty.Store(true)
	return true
}

func (f *walFile) Sync() error {
	if f.lazy() {
		return nil
	}
	return f.File.Sync()
}

func (f *walFile) SyncData() error {
	if f.lazy() {
		return nil
	}
	return f.File.SyncData()
}

func (f *walFile) SyncTo(length int64) (fullSync bool, err error) {
	if f.lazy() {
		return false, nil
	}
	return f.File.SyncTo(length)
}

func (f *walFile) Close() error {
	if f.dirty.Load() {
		if err := f.File.SyncData(); err != nil {
			f.File.Close()
			return err
		}
	}
	return f.File.Close()
}
