package main

import (
	"runtime/debug"
	"strings"
	"testing"
)

// --memory-limit sets the Go heap's soft limit to the budget less the
// store's off-heap memory; 0 sets none; GOMEMLIMIT in the environment
// takes its place; a budget too small for the store is refused, naming the
// flag.
func TestApplyMemoryLimit(t *testing.T) {
	prev := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(prev) })
	t.Setenv("GOMEMLIMIT", "")

	limit, err := applyMemoryLimit(DefaultMemoryLimit)
	if err != nil || limit != DefaultMemoryLimit-storeOffHeap || debug.SetMemoryLimit(-1) != limit {
		t.Fatalf("default budget: limit %d, %v; runtime limit %d; want %d", limit, err, debug.SetMemoryLimit(-1), DefaultMemoryLimit-storeOffHeap)
	}
	debug.SetMemoryLimit(prev)
	if limit, err := applyMemoryLimit(0); limit != 0 || err != nil || debug.SetMemoryLimit(-1) != prev {
		t.Fatalf("--memory-limit 0: limit %d, %v; want none set", limit, err)
	}
	if _, err := applyMemoryLimit(storeOffHeap + 1<<20); err == nil || !strings.Contains(err.Error(), "--memory-limit") {
		t.Fatalf("a budget below the store's memory: %v, want an error naming the flag", err)
	}
	if _, err := applyMemoryLimit(-5); err == nil || !strings.Contains(err.Error(), "--memory-limit -5") {
		t.Fatalf("a negative budget: %v, want an error naming it", err)
	}
	t.Setenv("GOMEMLIMIT", "300MiB")
	if limit, err := applyMemoryLimit(DefaultMemoryLimit); limit != 0 || err != nil || debug.SetMemoryLimit(-1) != prev {
		t.Fatalf("with GOMEMLIMIT set: limit %d, %v; want none set by the flag", limit, err)
	}
}
