//go:build !linux || !cgo

package store

// Without cgo pebble allocates in the Go heap, which the Go runtime
// returns to the system itself: nothing to trim.
const trimEvery = 0

func trimMalloc() {}
