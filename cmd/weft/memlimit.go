package main

import (
	"fmt"
	"os"
	"runtime/debug"

	"github.com/weft-crawler/weft/internal/bytesize"
	"github.com/weft-crawler/weft/internal/store"
)

// DefaultMemoryLimit is --memory-limit's default: the whole process's
// budget, as issue 21 sizes one node's crawl of a million hosts.
const DefaultMemoryLimit = 1 << 30

// storeOffHeap is the memory the process takes outside the Go heap's
// limit: the store's at its defaults (pebble's block cache and its
// memtables, allocated by C) and 128 MiB for the rest (the binary,
// pebble's other C allocations, threads, and what the Go runtime holds
// beside the heap the limit counts). It comes out of the budget before
// the Go heap gets the rest: weft bench hosts with only the store's 192
// MiB set aside passed 1 GiB of RSS at 92,000 hosts, and with 64 MiB more
// it reached 1,046 MiB at 165,000 hosts (peak 1,076 MiB while closing).
const storeOffHeap = store.DefaultCacheSize + 4*store.DefaultMemTableSize + 128<<20

// minGoLimit is the least Go heap limit a budget gives: below it the
// collector would run all the time for the crawl's fixed structures.
const minGoLimit = 256 << 20

// applyMemoryLimit holds the Go heap below total bytes less the store's
// memory (runtime/debug.SetMemoryLimit: a soft limit, the collector works
// harder as the heap nears it, instead of letting it grow to twice what is
// live), and returns the limit set: 0 if total is 0 (no limit) or
// GOMEMLIMIT is set in the environment, which then rules.
func applyMemoryLimit(total int64) (int64, error) {
	switch {
	case total < 0:
		return 0, usagef("--memory-limit %d: must be 0 (no limit) or a size", total)
	case total == 0 || os.Getenv("GOMEMLIMIT") != "":
		return 0, nil
	case total-storeOffHeap < minGoLimit:
		return 0, usagef("--memory-limit %d: at least %s is needed (%s outside the Go heap, %s for it)",
			total, bytesize.Format(storeOffHeap+minGoLimit), bytesize.Format(storeOffHeap), bytesize.Format(minGoLimit))
	}
	limit := total - storeOffHeap
	debug.SetMemoryLimit(limit)
	return limit, nil
}

// memoryLimitUsage is the flag's help.
var memoryLimitUsage = fmt.Sprintf("the process's memory budget: the Go heap is held below it less what is not Go's (%d MiB: the store's cache and memtables and the rest), by a soft limit on the collector; GOMEMLIMIT in the environment takes its place; 0: no limit", storeOffHeap>>20)
