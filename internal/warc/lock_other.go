//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package warc

import (
	"errors"
	"os"
)

// filesLocked says that lockFile takes no lock here: Recover must not run
// while a Writer in another process writes to the same directory. Open
// files cannot be renamed or removed on every such platform, so files are
// closed first (see closeAndRename).
const filesLocked = false

var errLocked = errors.New("locked by another writer or by Recover")

// lockFile does nothing on this platform.
func lockFile(f *os.File) error { return nil }
