package archive

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/weft-crawler/weft/internal/store"
)

// ObjectStore keeps finished WARC files away from the crawl's disk: an
// S3-compatible bucket (package objstore) in production.
type ObjectStore interface {
	// Upload stores the file at localPath, checked, and returns its key.
	Upload(ctx context.Context, localPath string) (string, error)
	// Open reads length bytes of the object at key from offset.
	Open(ctx context.Context, key string, offset, length int64) (io.ReadCloser, error)
}

// metaObject prefixes the store's record of an uploaded WARC file: the
// name is the file's base name, the value its object key. It is written,
// synced, before the local file is removed, so a file is always on disk,
// in the bucket, or both.
const metaObject = "object/"

// UploadAttempts and UploadConfig.Wait bound how long one file is retried
// in a row; a file that still fails is queued again after
// UploadConfig.Later (a crawl that runs for days outlives an outage of the
// store), and one left at the end stays on disk for the next start.
// UploadDrain is how long the end of a crawl waits for the files still
// queued.
const (
	UploadAttempts = 5
	UploadDrain    = 10 * time.Minute
)

// Uploads is what the uploader did in a run.
type Uploads struct {
	Files     int64  `json:"files"`      // uploaded and removed from disk
	Bytes     int64  `json:"bytes"`      // their size
	Failed    int64  `json:"failures"`   // runs of attempts that failed (the file stayed on disk, to be tried again), as GET /v1/stats names them
	LastError string `json:"last_error"` // of the last failure
}

// Summary is what u did so far; nil for no uploader.
func (u *Uploader) Summary() *Uploads {
	if u == nil {
		return nil
	}
	s := &Uploads{Files: u.files.Load(), Bytes: u.bytes.Load(), Failed: u.failed.Load()}
	s.LastError, _ = u.lastErr.Load().(string)
	return s
}

// Uploader moves finished WARC files to the object store, one at a time,
// in the order they were finished.
type Uploader struct {
	objs  ObjectStore
	db    *store.DB
	dir   string
	wait  time.Duration // before the second attempt; doubled for each after
	later time.Duration // before a file that failed every attempt is queued again
	log   interface {
		Info(msg string, args ...any)
		Error(msg string, args ...any)
	}

	mu      sync.Mutex
	queue   []string
	closed  bool
	wake    chan struct{}
	done    chan struct{}
	ctx     context.Context
	cancel  context.CancelFunc
	files   atomic.Int64 // uploaded
	bytes   atomic.Int64
	failed  atomic.Int64 // files left on disk after UploadAttempts
	lastErr atomic.Value // string
}

// UploadConfig says where an Uploader moves which files.
type UploadConfig struct {
	Objects ObjectStore
	DB      *store.DB // where each upload is recorded
	Dir     string    // the WARC files' directory
	// Wait is the wait before a file's second attempt, doubled for each
	// after; Later the wait before a file that failed every attempt is
	// queued again. Zero means 500 ms and a minute.
	Wait, Later time.Duration
	Log         *slog.Logger
}

// StartUploads starts the uploader of the WARC files in cfg.Dir, and
// queues the finished files an earlier run left on disk: not yet
// uploaded, or uploaded but not yet removed (those are removed now).
func StartUploads(cfg UploadConfig) (*Uploader, error) {
	u := &Uploader{objs: cfg.Objects, db: cfg.DB, dir: cfg.Dir, log: cfg.Log,
		wait: cmp.Or(cfg.Wait, 500*time.Millisecond), later: cmp.Or(cfg.Later, time.Minute),
		wake: make(chan struct{}, 1), done: make(chan struct{})}
	u.ctx, u.cancel = context.WithCancel(context.Background())
	entries, err := os.ReadDir(u.dir)
	if err != nil {
		return nil, fmt.Errorf("archive: WARC directory: %w", err)
	}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".warc.gz") {
			continue // ".open" files are being written, or are torn: Recover's
		}
		if _, ok, err := u.db.GetMeta(metaObject + name); err != nil {
			return nil, fmt.Errorf("archive: read the object record of %s: %w", name, err)
		} else if ok {
			if err := os.Remove(filepath.Join(u.dir, name)); err != nil {
				return nil, fmt.Errorf("archive: remove %s, already uploaded: %w", name, err)
			}
			continue
		}
		u.queue = append(u.queue, name)
	}
	slices.Sort(u.queue) // names start with their time: oldest first
	go u.run()
	u.signal()
	return u, nil
}

// Add queues a file the WARC writer just finished: it is the writer's
// OnFinish.
func (u *Uploader) Add(name string) {
	u.mu.Lock()
	if !u.closed {
		u.queue = append(u.queue, filepath.Base(name))
	}
	u.mu.Unlock()
	u.signal()
}

func (u *Uploader) signal() {
	select {
	case u.wake <- struct{}{}:
	default:
	}
}

func (u *Uploader) next() (string, bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(u.queue) == 0 {
		return "", !u.closed
	}
	name := u.queue[0]
	u.queue = u.queue[1:]
	return name, true
}

func (u *Uploader) run() {
	defer close(u.done)
	for {
		name, more := u.next()
		switch {
		case !more:
			return
		case name == "":
			select {
			case <-u.wake:
			case <-u.ctx.Done():
				return
			}
		default:
			u.move(name)
		}
	}
}

// move uploads one file, records its key durably, and removes it, retrying
// the upload a few times; a file that will not go stays on disk, counted,
// for the next start to try again.
func (u *Uploader) move(name string) {
	path := filepath.Join(u.dir, name)
	st, err := os.Stat(path)
	if err != nil {
		u.fail(name, err)
		return
	}
	var key string
	for attempt := 1; ; attempt++ {
		if key, err = u.objs.Upload(u.ctx, path); err == nil {
			break
		}
		if attempt == UploadAttempts || u.ctx.Err() != nil {
			u.fail(name, err)
			return
		}
		select {
		case <-time.After(u.wait << (attempt - 1)):
		case <-u.ctx.Done():
			u.fail(name, u.ctx.Err())
			return
		}
	}
	b := u.db.NewBatch()
	b.PutMeta(metaObject+name, []byte(key))
	if err := b.Commit(true); err != nil {
		u.fail(name, fmt.Errorf("record its key: %w", err))
		return
	}
	if err := os.Remove(path); err != nil {
		u.log.Error("WARC file uploaded but not removed", "file", name, "err", err)
	}
	u.files.Add(1)
	u.bytes.Add(st.Size())
	u.log.Info("WARC file uploaded", "file", name, "key", key, "bytes", st.Size())
}

func (u *Uploader) fail(name string, err error) {
	u.failed.Add(1)
	u.lastErr.Store(err.Error())
	u.log.Error("WARC file not uploaded; it stays on disk, to be tried again later or at the next start", "file", name, "err", err)
	if u.ctx.Err() == nil {
		time.AfterFunc(u.later, func() { u.Add(name) }) // add does nothing once closed
	}
}

// close uploads what is queued, waiting at most wait for it (a file not
// uploaded by then stays on disk for the next start), and stops.
func (u *Uploader) Close(wait time.Duration) {
	u.mu.Lock()
	u.closed = true
	u.mu.Unlock()
	u.signal()
	t := time.AfterFunc(wait, u.cancel)
	<-u.done
	t.Stop()
	u.cancel()
}

// objectKey returns the object key of an uploaded WARC file, if it was.
func objectKey(db *store.DB, file string) (string, bool, error) {
	v, ok, err := db.GetMeta(metaObject + filepath.Base(file))
	return string(v), ok, err
}
