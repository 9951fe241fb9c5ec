package synthweb

import "math"

// rng is a splitmix64 generator. It is tiny, allocation-free and has a
// fixed, documented output sequence, so the synthetic web is identical on
// every Go release (math/rand's algorithms are not promised to stay put).
type rng struct{ s uint64 }

// Streams separate the random decisions made for one host or page so that
// changing how one decision is drawn never shifts another.
const (
	streamHostSize uint64 = iota + 1
	streamLatency
	streamPaths
	streamTree
	streamLinkCount
	streamPlan
	streamText
	streamTextTable
	streamObligations
	streamArticle
	streamLive
	streamHostile // big bodies of hostile hosts
	streamTrap    // text of the small pages of hostile and trap hosts
	streamSeeds   // everything of WorldSeeds
	streamLiveAge // a live page's last change before the web started
	streamOrder   // everything of WorldOrder
	streamHeavy   // everything of WorldHeavy
)

func mix64(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// newRNG derives an independent generator for (seed, stream, a, b).
func newRNG(seed int64, stream, a, b uint64) rng {
	z := mix64(uint64(seed) ^ 0x6a09e667f3bcc909)
	z = mix64(z ^ stream*0x9e3779b97f4a7c15)
	z = mix64(z ^ (a+1)*0xc2b2ae3d27d4eb4f)
	z = mix64(z ^ (b+1)*0x165667b19e3779f9)
	return rng{s: z}
}

func (r *rng) next() uint64 {
	r.s += 0x9e3779b97f4a7c15
	return mix64(r.s)
}

// intn returns a value in [0, n). The multiply-shift reduction is very
// slightly biased for huge n, which does not matter for synthetic content.
func (r *rng) intn(n int) int {
	if n <= 1 {
		return 0
	}
	return int((r.next() >> 32) * uint64(n) >> 32)
}

// between returns a value in [lo, hi].
func (r *rng) between(lo, hi int) int {
	if hi <= lo {
		return lo
	}
	return lo + r.intn(hi-lo+1)
}

func (r *rng) float() float64 { return float64(r.next()>>11) / (1 << 53) }

func (r *rng) chance(p float64) bool { return r.float() < p }

// exp draws from the exponential distribution of mean 1.
func (r *rng) exp() float64 { return -math.Log(1 - r.float()) }
