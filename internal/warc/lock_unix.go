//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package warc

import (
	"errors"
	"os"
	"syscall"
)

// filesLocked says that lockFile takes a real lock here. A locked file can
// then be renamed and removed while it is open, so the lock is held until
// the file has its final name (see closeAndRename).
const filesLocked = true

// errLocked means another open file, in this process or another, holds the
// lock: a live Writer, or Recover looking at the file.
var errLocked = errors.New("locked by another writer or by Recover")

// lockFile takes an exclusive advisory lock (flock) on f without waiting.
// It returns errLocked if someone else holds it. A file system that does
// not support locks (some network file systems) gets no lock and no
// error: the lock only guards against Recover running while a Writer in
// another process writes to the same directory.
func lockFile(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var lerr error
	if err := rc.Control(func(fd uintptr) {
		for {
			lerr = syscall.Flock(int(fd), syscall.LOCK_EX|syscall.LOCK_NB)
			if lerr != syscall.EINTR {
				return
			}
		}
	}); err != nil {
		return err
	}
	switch {
	case lerr == nil:
		return nil
	case lerr == syscall.EWOULDBLOCK:
		return errLocked
	case lerr == syscall.ENOLCK || errors.Is(lerr, errors.ErrUnsupported):
		return nil
	}
	return lerr
}
