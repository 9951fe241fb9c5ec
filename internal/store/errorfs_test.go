package store

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
)

// walWriteFault injects errorfs.ErrInjected into every write to a WAL file
// while it is on. It leaves the MANIFEST and sstables alone: pebble treats a
// failed MANIFEST write in a background flush as fatal to the process, which
// is the right response in production but not something a test can survive.
func walWriteFault() *errorfs.Toggle {
	return &errorfs.Toggle{Injector: errorfs.InjectorFunc(func(op errorfs.Op) error {
		if op.Kind.ReadOrWrite() == errorfs.OpIsWrite && strings.HasSuffix(op.Path, ".log") {
			return errorfs.ErrInjected
		}
		return nil
	})}
}

func TestCommitWriteError(t *testing.T) {
	for _, sync := range []bool{true, false} {
		name := "nosync"
		if sync {
			name = "sync"
		}
		t.Run(name, func(t *testing.T) {
			mem := vfs.NewMem()
			fault := walWriteFault()
			db, err := Open("/db", &Options{FS: errorfs.Wrap(mem, fault)})
			if err != nil {
				t.Fatal(err)
			}
			const per = 10
			for i := uint64(1); i <= 5; i++ {
				if err := crashBatch(db, i, per).Commit(i == 5); err != nil {
					t.Fatal(err)
				}
			}

			fault.On()
			// A synced commit fails at once. An unsynced one returns before
			// the WAL is written, so the error surfaces on a later commit;
			// the batches between may be lost whole, as in a power failure.
			var commitErr error
			var failedAt uint64
			for i := uint64(6); i < 2000 && commitErr == nil; i++ {
				commitErr = crashBatch(db, i, per).Commit(sync)
				failedAt = i
			}
			if commitErr == nil {
				t.Fatal("no commit failed while WAL writes failed")
			}
			if sync && failedAt != 6 {
				t.Errorf("first synced commit after the fault was %d, want 6", failedAt)
			}
			if !errors.Is(commitErr, errorfs.ErrInjected) {
				t.Errorf("commit error %v does not wrap errorfs.ErrInjected", commitErr)
			}
			if !strings.Contains(commitErr.Error(), "store /db:") {
				t.Errorf("commit error %q does not name the store directory", commitErr)
			}
			t.Logf("commit %d failed: %v", failedAt, commitErr)

			// The DB refuses further use rather than hang in pebble's broken
			// commit pipeline or serve a view the disk does not have.
			if _, _, err := db.GetMeta("last"); !errors.Is(err, ErrFailed) {
				t.Errorf("read after failed commit = %v, want ErrFailed", err)
			}
			if err := crashBatch(db, 9999, per).Commit(false); !errors.Is(err, ErrFailed) || !errors.Is(err, errorfs.ErrInjected) {
				t.Errorf("commit after failed commit = %v, want ErrFailed wrapping the first failure", err)
			}
			if err := db.Close(); err != nil {
				t.Logf("close after failure: %v", err)
			}

			// Clear the fault and reopen on the same MemFS: everything up to
			// the synced commit is there, and the store is consistent.
			fault.Off()
			db, err = Open("/db", &Options{FS: mem})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			last := checkConsistent(t, db, per)
			if last < 5 || last >= failedAt {
				t.Errorf("after reopen last batch = %d, want in [5, %d)", last, failedAt)
			}
			if sync && last != 5 {
				t.Errorf("after reopen last batch = %d, want 5", last)
			}
			// And it works again.
			if err := crashBatch(db, last+1, per).Commit(true); err != nil {
				t.Fatal(err)
			}
			if got := checkConsistent(t, db, per); got != last+1 {
				t.Errorf("after a new commit last = %d, want %d", got, last+1)
			}
		})
	}
}

func TestOpenFailures(t *testing.T) {
	t.Run("corrupt manifest", func(t *testing.T) {
		for _, disk := range []bool{false, true} {
			var fs vfs.FS = vfs.NewMem()
			dir := "/db"
			if disk {
				fs = vfs.Default
				dir = filepath.Join(t.TempDir(), "db")
			}
			db, err := Open(dir, &Options{FS: fs})
			if err != nil {
				t.Fatal(err)
			}
			if err := crashBatch(db, 1, 5).Commit(true); err != nil {
				t.Fatal(err)
			}
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			names, err := fs.List(dir)
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, name := range names {
				if strings.HasPrefix(name, "MANIFEST-") {
					f, err := fs.Create(fs.PathJoin(dir, name), vfs.WriteCategoryUnspecified)
					if err != nil {
						t.Fatal(err)
					}
					f.Write([]byte(strings.Repeat("this is not a manifest\n", 100)))
					f.Close()
					n++
				}
			}
			if n == 0 {
				t.Fatalf("no MANIFEST in %v", names)
			}
			_, err = Open(dir, &Options{FS: fs})
			if err == nil || !strings.Contains(err.Error(), "store: open "+dir+":") {
				t.Errorf("Open of a store with a garbage MANIFEST = %v, want an error naming %s", err, dir)
			}
			t.Logf("disk=%v: %v", disk, err)
		}
	})
	t.Run("path is a file", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "file")
		if err := os.WriteFile(path, []byte("garbage"), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Open(path, nil)
		if err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("Open of a regular file = %v, want an error naming it", err)
		}
		t.Log(err)
	})
	t.Run("garbage files", func(t *testing.T) {
		// A directory of files that look like pebble's but are not.
		dir := filepath.Join(t.TempDir(), "db")
		os.MkdirAll(dir, 0o755)
		for _, name := range []string{"marker.manifest.000001.MANIFEST-000001", "MANIFEST-000001", "000002.log", "OPTIONS-000003"} {
			if err := os.WriteFile(filepath.Join(dir, name), []byte("\x00\xffgarbage\x17"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		_, err := Open(dir, nil)
		if err == nil || !strings.Contains(err.Error(), dir) {
			t.Errorf("Open of a garbage directory = %v, want an error naming it", err)
		}
		t.Log(err)
	})
}

// TestConcurrentCommitsAndWriteError commits from many goroutines (the
// group commit merges them), then fails the WAL under them: every
// goroutine gets an error, none hangs or panics, and after a reopen every
// commit that succeeded is there.
func TestConcurrentCommitsAndWriteError(t *testing.T) {
	mem := vfs.NewMem()
	fault := walWriteFault()
	db, err := Open("/db", &Options{FS: errorfs.Wrap(mem, fault)})
	if err != nil {
		t.Fatal(err)
	}
	const workers = 8
	var (
		mu        sync.Mutex
		committed [][16]byte
		failures  int
	)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for i := 0; ; i++ {
				url := fmt.Sprintf("https://w%d.test/%d", w, i)
				b := db.NewBatch()
				b.PutURL(uint16(w), fmt.Sprintf("w%d.test", w), hashOf(url), URLRecord{URL: url, Status: URLQueued})
				b.PushQueue(uint16(w), fmt.Sprintf("w%d.test", w), uint64(i), QueueItem{URL: url})
				err := b.Commit(i%50 == 0)
				mu.Lock()
				if err != nil {
					failures++
					mu.Unlock()
					if !errors.Is(err, errorfs.ErrInjected) || !strings.Contains(err.Error(), "/db") {
						t.Errorf("worker %d: %v", w, err)
					}
					return
				}
				committed = append(committed, hashOf(url))
				n := len(committed)
				mu.Unlock()
				if n == 2000 {
					fault.On()
				}
			}
		}()
	}
	close(start)
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("committers hung after the WAL failed")
	}
	if failures != workers {
		t.Errorf("%d of %d workers saw the failure", failures, workers)
	}
	db.Close()
	fault.Off()

	db, err = Open("/db", &Options{FS: mem})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, h := range committed {
		found := false
		for w := range workers {
			if has, err := db.HasURL(uint16(w), fmt.Sprintf("w%d.test", w), h); err != nil {
				t.Fatal(err)
			} else if has {
				found = true
				break
			}
		}
		if !found {
			t.Fatalf("a committed URL is missing after reopen (%d committed)", len(committed))
		}
	}
	t.Logf("%d commits succeeded before the fault stopped all %d workers", len(committed), workers)
}
