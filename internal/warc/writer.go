package warc

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/weft-crawler/weft/internal/freelist"
)

// openSuffix marks a file still being written; it is renamed away once the
// file is complete and synced.
const openSuffix = ".open"

// Writer appends exchanges to WARC files in one directory. It is safe for
// concurrent use: records are digested and compressed in the calling
// goroutine, and only the append to the file is serialised.
type Writer struct {
	cfg   Config // defaults applied
	token string // random, in every file name: two writers started in the same second in one directory never collide
	now   func() time.Time

	encoders *freelist.List[*encoder]

	mu       sync.Mutex
	file     *os.File // current file; nil before the first exchange, after Close and after an abandoned write
	name     string   // final base name of file
	size     int64    // bytes in file
	records  int      // exchanges in file
	seq      int      // sequence number of the next file
	files    []string // final base names, in order
	closed   bool
	finishes sync.WaitGroup // files being synced and renamed outside mu
	errs     []error        // from finishing files outside mu; returned by Close

	bytes atomic.Int64
}

// NewWriter validates cfg, creates cfg.Dir if needed and returns a Writer.
// The first file is created by the first WriteExchange. A Writer never
// appends to or replaces an existing file: if a file, finished or
// ".open", already has the name it would give a new file, it takes the
// next sequence number. Run [Recover] on cfg.Dir first after a crash.
func NewWriter(cfg Config) (*Writer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	if cfg.Hostname == "" {
		// os.Hostname asks the kernel: no DNS, no network.
		if h, err := os.Hostname(); err == nil {
			cfg.Hostname = h
		}
	}
	if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("warc: create directory: %w", err)
	}
	var t [3]byte
	rand.Read(t[:]) // never fails: crypto/rand.Read crashes the program instead
	w := &Writer{
		cfg:   cfg,
		token: hex.EncodeToString(t[:]),
		now:   time.Now,
	}
	// Validate has checked the level; building the first encoder here
	// returns the error properly if that ever changes, so New cannot fail.
	e, err := newEncoder(cfg.CompressionLevel)
	if err != nil {
		return nil, err
	}
	w.encoders = freelist.New(maxKeptEncoders, func() *encoder {
		e, _ := newEncoder(w.cfg.CompressionLevel)
		return e
	})
	w.encoders.Put(e)
	return w, nil
}

// WriteExchange writes a request record and then a response record for ex,
// each its own gzip member, contiguous in one file, and returns where the
// response record is. The request record's WARC-Concurrent-To names the
// response record.
//
// Before the exchange is appended, the current file is finished and a new
// one started if the exchange would take it past MaxFileSize (unless the
// file holds no exchange yet). An exchange is never split across files.
// The call that rotates syncs and renames the finished file after
// releasing the lock, so other callers do not wait for the sync; an error
// doing so does not concern this exchange, which was written, and is
// returned by Close.
func (w *Writer) WriteExchange(ex Exchange) (Location, error) {
	if err := checkExchange(&ex); err != nil {
		return Location{}, err
	}
	e := w.encoders.Get()
	defer w.release(e)
	e.out.Reset()
	reqLen, respID, err := e.exchange(&ex)
	if err != nil {
		return Location{}, fmt.Errorf("warc: %s: compress: %w", ex.URL, err)
	}
	loc, err := w.append(e.out.Bytes(), ex.URL, ex.Date)
	if err != nil {
		return Location{}, err
	}
	loc.Offset += int64(reqLen)
	loc.Length = int64(e.out.Len() - reqLen)
	loc.RecordID = string(appendID(nil, respID))
	return loc, nil
}

// WriteMetadata appends a metadata record, in the current file or the next
// one (it is not kept with the exchange it is about; WARC-Concurrent-To
// links them).
func (w *Writer) WriteMetadata(m Metadata) (Location, error) {
	if err := checkMetadata(&m); err != nil {
		return Location{}, err
	}
	e := w.encoders.Get()
	defer w.release(e)
	e.out.Reset()
	if err := e.metadata(&m); err != nil {
		return Location{}, fmt.Errorf("warc: metadata for %s: compress: %w", m.URL, err)
	}
	loc, err := w.append(e.out.Bytes(), m.URL, m.Date)
	loc.Length = int64(e.out.Len())
	return loc, err
}

// append writes recs, the records of one call, dated date, rotating the
// file first if needed; the call that rotates finishes the old file after
// unlocking.
func (w *Writer) append(recs []byte, url string, date time.Time) (Location, error) {
	w.mu.Lock()
	loc, finished, err := w.appendLocked(recs, date)
	if finished != nil {
		w.finishes.Add(1)
	}
	w.mu.Unlock()

	if finished != nil {
		// Syncing a full file can take long; only this caller waits for it.
		ferr := finished.finish()
		w.mu.Lock()
		if ferr != nil {
			w.errs = append(w.errs, ferr)
		}
		w.mu.Unlock()
		if ferr == nil && w.cfg.OnFinish != nil {
			w.cfg.OnFinish(finished.name)
		}
		w.finishes.Done()
	}
	if err != nil {
		return Location{}, fmt.Errorf("warc: %s: %w", url, err)
	}
	return loc, nil
}

func (w *Writer) release(e *encoder) {
	if e.out.Cap() > maxPooledBuffer {
		return
	}
	w.encoders.Put(e)
}

// appendLocked appends recs, dated date, rotating first if needed. It
// returns the offset of recs in the file and the file it finished, if
// any, for the caller to sync and rename after unlocking.
func (w *Writer) appendLocked(recs []byte, date time.Time) (Location, *openFile, error) {
	if w.closed {
		return Location{}, nil, errors.New("writer is closed")
	}
	var finished *openFile
	if w.file != nil && w.records > 0 && w.size+int64(len(recs)) > w.cfg.MaxFileSize {
		finished = w.detachLocked()
	}
	if w.file == nil {
		if err := w.openLocked(date); err != nil {
			return Location{}, finished, err
		}
	}
	off := w.size
	if err := w.writeLocked(recs); err != nil {
		return Location{}, finished, err
	}
	w.records++
	return Location{File: w.name, Offset: off}, finished, nil
}

// writeLocked appends b to the current file at w.size. On failure it cuts
// the file back to w.size so that the file still ends on a record
// boundary; if even that fails, the file is abandoned under its ".open"
// name, which no reader trusts, and the next exchange starts a new file.
// Closed, the abandoned file is no longer locked, and Recover cuts it back
// to its last whole record.
func (w *Writer) writeLocked(b []byte) error {
	n, err := w.file.WriteAt(b, w.size)
	if err == nil {
		w.size += int64(n)
		w.bytes.Add(int64(n))
		return nil
	}
	err = fmt.Errorf("write %s: %w", w.name, err)
	if n > 0 {
		if terr := w.file.Truncate(w.size); terr != nil {
			w.file.Close()
			name := w.name
			w.file, w.name, w.size, w.records = nil, "", 0, 0
			w.files = w.files[:len(w.files)-1]
			return errors.Join(err, fmt.Errorf("abandoned %s%s: %w", name, openSuffix, terr))
		}
	}
	return err
}

// maxNameTries bounds how many sequence numbers openLocked tries when
// names are taken. Names carry the second and a random token, so a name
// is taken only if a file of the same prefix, second and token exists.
const maxNameTries = 100

// openLocked creates the next file, for a first record dated first, and
// writes its warcinfo record. It never opens an existing file: if the name
// it would use is taken, it moves on to the next sequence number.
//
// The file is named for the time it is created, but its warcinfo is dated
// no later than its first record: a file is opened by the record that
// needs it, after that record's capture began (a fetch's start), and a
// warcinfo dated after the records it describes reads as a file that
// claims to begin after its own content.
func (w *Writer) openLocked(first time.Time) error {
	now := w.now()
	infoDate := now
	if first.Before(now) {
		infoDate = first
	}
	var (
		f    *os.File
		name string
	)
	for try := 1; ; try++ {
		name = fmt.Sprintf("%s-%s-%05d-%s.warc.gz", w.cfg.Prefix, now.UTC().Format("20060102150405"), w.seq, w.token)
		var err error
		f, err = createFile(w.cfg.Dir, name)
		if err == nil {
			break
		}
		if !errors.Is(err, errNameTaken) || try == maxNameTries {
			return fmt.Errorf("create %s: %w", name, err)
		}
		w.seq++
	}
	path := filepath.Join(w.cfg.Dir, name)

	e := w.encoders.Get()
	defer w.release(e)
	e.out.Reset()
	if err := e.warcinfo(&w.cfg, name, infoDate); err != nil {
		removeAndClose(f, path+openSuffix)
		return fmt.Errorf("%s: warcinfo: %w", name, err)
	}
	if _, err := f.WriteAt(e.out.Bytes(), 0); err != nil {
		removeAndClose(f, path+openSuffix)
		return fmt.Errorf("%s: write warcinfo: %w", name, err)
	}
	w.file, w.name, w.size, w.records = f, name, int64(e.out.Len()), 0
	w.bytes.Add(int64(e.out.Len()))
	w.seq++
	w.files = append(w.files, name)
	return nil
}

var errNameTaken = errors.New("name taken")

// createFile creates name+".open" in dir, empty and locked (see lockFile),
// for writing. It returns errNameTaken if that file or the finished file
// exists, or if Recover took the new file before it could be locked (and
// then removes it, as it holds no record).
//
// Both are checked, the finished name after the ".open" file is created
// and locked: a file gets its finished name only by a rename from its
// ".open" name by the holder of its lock, so once our ".open" file exists
// no other file can take the finished name, and a file finished before
// ours was created is seen.
func createFile(dir, name string) (*os.File, error) {
	path := filepath.Join(dir, name)
	f, err := os.OpenFile(path+openSuffix, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return nil, errNameTaken
	}
	if err != nil {
		return nil, err
	}
	switch err := lockFile(f); {
	case errors.Is(err, errLocked):
		// Recover in another process opened the file between our create
		// and our lock. It finds no record in it and removes it.
		f.Close()
		return nil, errNameTaken
	case err != nil:
		removeAndClose(f, path+openSuffix)
		return nil, fmt.Errorf("lock: %w", err)
	}
	// Recover may also have opened, locked and removed it in that gap.
	if !stillAt(f, path+openSuffix) {
		f.Close()
		return nil, errNameTaken
	}
	if _, err := os.Lstat(path); err == nil {
		removeAndClose(f, path+openSuffix)
		return nil, errNameTaken
	} else if !errors.Is(err, fs.ErrNotExist) {
		removeAndClose(f, path+openSuffix)
		return nil, err
	}
	return f, nil
}

// stillAt reports whether path names the open file f.
func stillAt(f *os.File, path string) bool {
	fi, err := f.Stat()
	if err != nil {
		return false
	}
	pi, err := os.Lstat(path)
	return err == nil && os.SameFile(fi, pi)
}

// closeAndRename closes f, open at from, and renames it to to. Where
// files are locked the rename comes first, so that the lock is held until
// the file has its final name and Recover never finds a finished file
// unlocked under its ".open" name.
func closeAndRename(f *os.File, from, to string) error {
	if filesLocked {
		err := os.Rename(from, to)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(from, to)
}

// removeAndClose removes path, the open file f, and closes f, the lock
// held until the file is gone where files are locked.
func removeAndClose(f *os.File, path string) error {
	if filesLocked {
		err := os.Remove(path)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Remove(path)
}

// syncDir fsyncs dir, so that renames and removals in it survive a crash.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// openFile is a file detached from the Writer, waiting to be finished.
type openFile struct {
	f    *os.File
	dir  string
	name string
}

func (w *Writer) detachLocked() *openFile {
	o := &openFile{f: w.file, dir: w.cfg.Dir, name: w.name}
	w.file, w.name, w.size, w.records = nil, "", 0, 0
	return o
}

// finish syncs and closes the file, renames it to its final name and
// syncs the directory so that the rename survives a crash.
func (o *openFile) finish() error {
	final := filepath.Join(o.dir, o.name)
	if err := o.f.Sync(); err != nil {
		o.f.Close()
		return fmt.Errorf("warc: finish %s: %w", o.name, err)
	}
	if err := closeAndRename(o.f, final+openSuffix, final); err != nil {
		return fmt.Errorf("warc: finish %s: %w", o.name, err)
	}
	if err := syncDir(o.dir); err != nil {
		return fmt.Errorf("warc: finish %s: sync directory: %w", o.name, err)
	}
	return nil
}

// Close finishes the current file (sync, close, rename from ".open"),
// waits for files being finished by WriteExchange calls, and returns any
// error met while finishing files. Later calls to WriteExchange fail;
// later calls to Close return nil.
func (w *Writer) Close() error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return nil
	}
	w.closed = true
	var last *openFile
	if w.file != nil {
		last = w.detachLocked()
	}
	w.mu.Unlock()

	var errs []error
	if last != nil {
		if err := last.finish(); err != nil {
			errs = append(errs, err)
		} else if w.cfg.OnFinish != nil {
			w.cfg.OnFinish(last.name)
		}
	}
	w.finishes.Wait()
	w.mu.Lock()
	errs = append(w.errs, errs...)
	w.errs = nil
	w.mu.Unlock()
	return errors.Join(errs...)
}

// Files returns the base names of every file this Writer finished or is
// writing, oldest first. Until a file is finished (by rotation or Close)
// it is on disk under its name plus ".open".
func (w *Writer) Files() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.files...)
}

// Bytes returns the number of bytes written to files so far (compressed,
// warcinfo records included).
func (w *Writer) Bytes() int64 {
	return w.bytes.Load()
}
