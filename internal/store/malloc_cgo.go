//go:build linux && cgo

package store

/*
#include <malloc.h>

// weft_tune_malloc keeps the C allocator, which pebble's block cache and
// memtables use when cgo is on, from holding far more memory than they
// do: glibc's dynamic mmap threshold rises to 32 MiB after the first
// memtable is freed, so later memtables are carved from its arenas, and
// with an arena per busy thread the freed space stays resident in all of
// them. A fixed threshold sends every allocation of 1 MiB or more to mmap
// (returned to the system when freed), and two arenas bound the rest.
static void weft_trim_malloc(void) { malloc_trim(0); }

static void weft_tune_malloc(void) {
#ifdef M_MMAP_THRESHOLD
	mallopt(M_MMAP_THRESHOLD, 1 << 20);
#endif
#ifdef M_ARENA_MAX
	mallopt(M_ARENA_MAX, 2);
#endif
}
*/
import "C"

import "time"

func init() { C.weft_tune_malloc() }

// trimEvery is how often an open store hands the C allocator's free pages
// back to the system (malloc_trim, which since glibc 2.8 also releases
// free pages inside its heaps): pebble's block cache frees and allocates
// blocks of many sizes, and the holes it leaves stay resident otherwise.
// weft bench hosts at 305,000 hosts: one trim took RSS from 1,072 MiB to
// 960 MiB.
const trimEvery = 10 * time.Second

func trimMalloc() { C.weft_trim_malloc() }
