//go:build race

package crawl

// raceEnabled slows the crash test's kill rhythm: under the race detector a
// lease takes several times longer from response to commit.
const raceEnabled = true
