package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// Who holds a store. pebble's LOCK file keeps a second process out of a
// store's directory: an fcntl lock, which the kernel drops when its holder
// exits, however it exits. That lock alone decides. Beside it, Open writes
// a note of who holds it (ownerNote), so that the next process's error
// can say which process to stop; Close removes it. A note left by a process
// that was killed is stale and harmless: whoever takes the lock next
// writes its own.

// ownerNote is the note's file name: one pebble does not know, so pebble
// leaves it alone.
const ownerNote = "weft-owner.json"

// lockFile is the name of pebble's lock file, which Fresh keeps.
const lockFile = "LOCK"

// Owner is the process that holds a store open, as its note says.
type Owner struct {
	PID     int       `json:"pid"`
	Host    string    `json:"host"`    // the machine's name
	Started time.Time `json:"started"` // when it opened the store
	Command string    `json:"command"` // its command line, secrets left out
}

// String says who the owner is, in a few words:
//
//	pid 1234, started 2026-12-05 12:01:02, "weft crawl --data data https://example.org/"
func (o *Owner) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "pid %d", o.PID)
	if me, _ := os.Hostname(); o.Host != "" && o.Host != me {
		fmt.Fprintf(&b, " on %s", o.Host)
	}
	fmt.Fprintf(&b, ", started %s, %q", o.Started.Local().Format(time.DateTime), o.Command)
	return b.String()
}

// InUseError is what Open returns when another process, or another DB of
// this one, holds the store's directory.
type InUseError struct {
	Dir string
	// Owner is who holds it, from its note; nil when there is no note to
	// read (a weft that wrote none, or one that has only just locked).
	Owner *Owner
	Err   error // the lock's own error
}

func (e *InUseError) Error() string {
	if e.Owner == nil {
		return fmt.Sprintf("store: %s is in use by another process", e.Dir)
	}
	return fmt.Sprintf("store: %s is in use by another process (%s)", e.Dir, e.Owner)
}

func (e *InUseError) Unwrap() error { return e.Err }

// dataDirInUse is a data directory whose state another process holds.
type dataDirInUse struct {
	dir, advice string
	err         *InUseError
}

func (e *dataDirInUse) Error() string {
	who := "another weft"
	if e.err.Owner != nil {
		who += " (" + e.err.Owner.String() + ")"
	}
	return fmt.Sprintf("data directory %s is in use by %s; %s", e.dir, who, e.advice)
}

func (e *dataDirInUse) Unwrap() error { return e.err }

// InUse says, of an error opening dataDir's state that is a
// *InUseError, which process holds the directory and what to do
// (advice); other errors are returned as they are.
func InUse(dataDir string, err error, advice string) error {
	var iu *InUseError
	if errors.As(err, &iu) {
		return &dataDirInUse{dir: dataDir, advice: advice, err: iu}
	}
	return err
}

// lockDir takes pebble's lock on dir, for Open to pass to pebble.Open. A
// lock another holds is an *InUseError naming its owner.
func lockDir(fs vfs.FS, dir string) (*pebble.Lock, error) {
	lock, err := pebble.LockDirectory(dir, fs)
	if err == nil {
		return lock, nil
	}
	// The lock file that could not be made (a missing or unwritable
	// directory) is a *PathError; a lock that is held fails on the
	// fcntl call (EAGAIN, EACCES) or, held in this very process, with
	// an error of pebble's own.
	var pe *os.PathError
	if errors.As(err, &pe) {
		return nil, fmt.Errorf("store: open %s: %w", dir, err)
	}
	return nil, &InUseError{Dir: dir, Owner: readOwner(fs, dir), Err: err}
}

// readOwner reads dir's owner note; nil if there is none that reads.
func readOwner(fs vfs.FS, dir string) *Owner {
	f, err := fs.Open(fs.PathJoin(dir, ownerNote))
	if err != nil {
		return nil
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, 64<<10))
	if err != nil {
		return nil
	}
	var o Owner
	if json.Unmarshal(b, &o) != nil || o.PID == 0 {
		return nil
	}
	return &o
}

// writeOwner writes this process's note in dir, whole or not at all: to a
// temporary file, synced, renamed over the note, and the directory synced.
func writeOwner(fs vfs.FS, dir string, now time.Time) error {
	host, _ := os.Hostname()
	b, err := json.Marshal(Owner{PID: os.Getpid(), Host: host, Started: now, Command: commandLine(os.Args)})
	if err != nil {
		return err
	}
	tmp := fs.PathJoin(dir, ownerNote+".tmp")
	f, err := fs.Create(tmp, vfs.WriteCategoryUnspecified)
	if err != nil {
		return err
	}
	_, err = f.Write(append(b, '\n'))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = fs.Rename(tmp, fs.PathJoin(dir, ownerNote))
	}
	if err != nil {
		fs.Remove(tmp)
		return err
	}
	d, err := fs.OpenDir(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// maxCommandLine bounds the command line a note keeps: the seeds may
// follow the flags by the thousand.
const maxCommandLine = 300

// commandLine is args as a note shows it: the program's base name, and
// the value of any flag whose name says it is a secret left out.
func commandLine(args []string) string {
	out := make([]string, 0, len(args))
	hideNext := false
	for i, a := range args {
		switch {
		case i == 0:
			a = filepath.Base(a)
		case hideNext:
			a, hideNext = "***", false
		case strings.HasPrefix(a, "-"):
			name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
			if secretFlag(name) {
				if hasValue {
					a = a[:strings.IndexByte(a, '=')+1] + "***"
				} else {
					hideNext = true
				}
			}
		}
		out = append(out, a)
	}
	s := strings.Join(out, " ")
	if len(s) > maxCommandLine {
		s = strings.ToValidUTF8(s[:maxCommandLine], "") + "..."
	}
	return s
}

func secretFlag(name string) bool {
	name = strings.ToLower(name)
	if strings.HasSuffix(name, "header") { // --header, --webhook-header: a token's value
		return true
	}
	for _, w := range []string{"token", "secret", "password", "key"} {
		if strings.Contains(name, w) {
			return true
		}
	}
	return false
}

// wipe removes everything in dir but pebble's lock file and the owner
// note, for Options.Fresh: the store starts empty, and no other process
// could have opened it meanwhile, since the lock is held throughout.
func wipe(fs vfs.FS, dir string) error {
	names, err := fs.List(dir)
	if err != nil {
		return fmt.Errorf("store: start %s afresh: %w", dir, err)
	}
	for _, n := range names {
		if n == lockFile || n == ownerNote {
			continue
		}
		if err := fs.RemoveAll(fs.PathJoin(dir, n)); err != nil {
			return fmt.Errorf("store: start %s afresh: %w", dir, err)
		}
	}
	return nil
}
