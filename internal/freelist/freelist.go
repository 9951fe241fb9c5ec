// Package freelist keeps a bounded number of values for reuse, across
// garbage collections.
//
// sync.Pool drops what it holds within two collections, and a crawl
// collects often: the gzip encoders of the WARC writer (hundreds of KB of
// tables each) and the arrays of pages' word hashes were built again
// after every other collection, and were a good part of what the crawl
// allocated. A List holds at most its bound, so what it keeps is known:
// at most the bound times the size of one value.
package freelist

import "sync"

// List is a bounded free list. It is safe for concurrent use.
//
// It is a stack: Get returns the value Put last, the one most likely
// still in the CPU's caches. (A queue hands out the value that has been
// idle longest: with gzip encoders, whose match tables are hundreds of
// KB, that cost weft bench 5 % of its CPU.)
type List[T any] struct {
	mu    sync.Mutex
	free  []T
	fresh func() T
}

// New returns a List that keeps at most n values and makes a new one with
// fresh when it has none.
func New[T any](n int, fresh func() T) *List[T] {
	return &List[T]{free: make([]T, 0, n), fresh: fresh}
}

// Get returns the value kept last, or a fresh one.
func (l *List[T]) Get() T {
	l.mu.Lock()
	if n := len(l.free); n > 0 {
		v := l.free[n-1]
		var zero T
		l.free[n-1] = zero
		l.free = l.free[:n-1]
		l.mu.Unlock()
		return v
	}
	l.mu.Unlock()
	return l.fresh()
}

// Put keeps v for a later Get, unless the list is full: then v is left to
// the garbage collector.
func (l *List[T]) Put(v T) {
	l.mu.Lock()
	if len(l.free) < cap(l.free) {
		l.free = append(l.free, v)
	}
	l.mu.Unlock()
}

// Len is the number of values kept.
func (l *List[T]) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.free)
}
