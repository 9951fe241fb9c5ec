//go:build race

package scope

// raceEnabled: the race detector makes sync.Pool drop items at random, so
// regexp allocates its matchers anew and allocation counts mean nothing.
const raceEnabled = true
