package synthweb

import (
	"math"
	"slices"
)

// LinkGraph is a web as a crawler that follows every link sees it: its
// pages, each page's links in the order they first appear on it, and the
// seeds. A page's id is its index in URLs.
type LinkGraph struct {
	URLs  []string // the canonical URL of each page
	Hosts []int32  // the host of each page: its index in Web.Hosts
	// Off and To hold the links: page p links To[Off[p]:Off[p+1]], each
	// entry one link. len(Off) is len(URLs)+1.
	Off   []int32
	To    []int32
	Seeds []int32
}

// Links returns the pages p links to.
func (g *LinkGraph) Links(p int32) []int32 { return g.To[g.Off[p]:g.Off[p+1]] }

// Len is the number of pages.
func (g *LinkGraph) Len() int { return len(g.URLs) }

// PageRank computes the PageRank of every page by power iteration: a
// random surfer follows one of the page's links (each entry of To alike)
// with probability damping and jumps to a page drawn uniformly otherwise;
// a page without links spreads its mass over every page. It iterates until
// the L1 change of an iteration is below tol, or 10,000 iterations. The
// ranks sum to 1.
func (g *LinkGraph) PageRank(damping, tol float64) []float64 {
	n := g.Len()
	if n == 0 {
		return nil
	}
	pr := make([]float64, n)
	next := make([]float64, n)
	for i := range pr {
		pr[i] = 1 / float64(n)
	}
	for range 10_000 {
		dangling := 0.0
		clear(next)
		for p := range n {
			links := g.Links(int32(p))
			if len(links) == 0 {
				dangling += pr[p]
				continue
			}
			share := damping * pr[p] / float64(len(links))
			for _, t := range links {
				next[t] += share
			}
		}
		base := (1-damping)/float64(n) + damping*dangling/float64(n)
		diff := 0.0
		for i := range next {
			next[i] += base
			diff += math.Abs(next[i] - pr[i])
		}
		pr, next = next, pr
		if diff < tol {
			break
		}
	}
	return pr
}

// Depths returns each page's least number of link hops from a seed; -1
// for a page no seed reaches.
func (g *LinkGraph) Depths() []int32 {
	depth := make([]int32, g.Len())
	for i := range depth {
		depth[i] = -1
	}
	var queue []int32
	for _, s := range g.Seeds {
		if depth[s] < 0 {
			depth[s] = 0
			queue = append(queue, s)
		}
	}
	for i := 0; i < len(queue); i++ {
		p := queue[i]
		for _, t := range g.Links(p) {
			if depth[t] < 0 {
				depth[t] = depth[p] + 1
				queue = append(queue, t)
			}
		}
	}
	return depth
}

// BreadthFirst is the order in which a crawl with one first-in first-out
// queue fetches the pages the seeds reach: the seeds in their order, then
// each page's new links in the order they appear on it.
func (g *LinkGraph) BreadthFirst() []int32 {
	seen := make([]bool, g.Len())
	var order []int32
	for _, s := range g.Seeds {
		if !seen[s] {
			seen[s] = true
			order = append(order, s)
		}
	}
	for i := 0; i < len(order); i++ {
		for _, t := range g.Links(order[i]) {
			if !seen[t] {
				seen[t] = true
				order = append(order, t)
			}
		}
	}
	return order
}

// BreadthFirstByHost is the order in which a polite breadth-first crawl
// fetches the pages the seeds reach when every host answers equally fast:
// each host has its own first-in first-out queue, a new link joins its
// host's queue, and the hosts take turns, one page each, in the order of
// their index, skipping those with nothing queued. It is how a crawler
// that keeps one request in flight per host and orders each host's URLs
// by discovery spends its fetches.
func (g *LinkGraph) BreadthFirstByHost() []int32 {
	hosts := 0
	for _, h := range g.Hosts {
		hosts = max(hosts, int(h)+1)
	}
	queues := make([][]int32, hosts)
	heads := make([]int, hosts)
	seen := make([]bool, g.Len())
	for _, s := range g.Seeds {
		if !seen[s] {
			seen[s] = true
			queues[g.Hosts[s]] = append(queues[g.Hosts[s]], s)
		}
	}
	var order []int32
	for {
		fetched := false
		for h := range queues {
			if heads[h] == len(queues[h]) {
				continue
			}
			p := queues[h][heads[h]]
			heads[h]++
			fetched = true
			order = append(order, p)
			for _, t := range g.Links(p) {
				if !seen[t] {
					seen[t] = true
					queues[g.Hosts[t]] = append(queues[g.Hosts[t]], t)
				}
			}
		}
		if !fetched {
			return order
		}
	}
}

// RankOrder is every page by decreasing rank, ties by id: the best
// possible fetch order for capturing rank early.
func RankOrder(rank []float64) []int32 {
	order := make([]int32, len(rank))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortStableFunc(order, func(a, b int32) int {
		switch {
		case rank[a] > rank[b]:
			return -1
		case rank[a] < rank[b]:
			return 1
		}
		return 0
	})
	return order
}

// PoliteRankOrder is the best fetch order for capturing rank early that
// one request at a time per host allows when every host answers equally
// fast: the hosts take turns, one page each, and each gives its pages by
// decreasing rank. Links are not followed: every page is taken as known.
func (g *LinkGraph) PoliteRankOrder(rank []float64) []int32 {
	hosts := 0
	for _, h := range g.Hosts {
		hosts = max(hosts, int(h)+1)
	}
	queues := make([][]int32, hosts)
	for _, p := range RankOrder(rank) {
		queues[g.Hosts[p]] = append(queues[g.Hosts[p]], p)
	}
	order := make([]int32, 0, len(rank))
	for turn := 0; len(order) < len(rank); turn++ {
		for _, q := range queues {
			if turn < len(q) {
				order = append(order, q[turn])
			}
		}
	}
	return order
}

// MassAt is the rank held by the first k pages of order, which must not
// name a page twice; false when order has fewer than k pages.
func MassAt(order []int32, rank []float64, k int) (float64, bool) {
	if k > len(order) {
		return 0, false
	}
	sum := 0.0
	for _, p := range order[:k] {
		sum += rank[p]
	}
	return sum, true
}
