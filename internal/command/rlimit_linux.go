package command

import "golang.org/x/sys/unix"

const rlimitSupported = true

// limitMemory caps the address space of process pid (prlimit(2)).
func limitMemory(pid int, bytes uint64) error {
	return unix.Prlimit(pid, unix.RLIMIT_AS, &unix.Rlimit{Cur: bytes, Max: bytes}, nil)
}
