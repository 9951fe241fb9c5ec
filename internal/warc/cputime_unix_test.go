//go:build unix

package warc

import (
	"syscall"
	"time"
)

// processCPU returns the user+system CPU time of the process so far, so
// benchmarks can report CPU per operation, which other load on a shared
// machine distorts much less than wall time.
func processCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
