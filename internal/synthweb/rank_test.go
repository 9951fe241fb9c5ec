package synthweb

import (
	"math"
	"slices"
	"testing"
)

// graphOf builds a LinkGraph from each page's host and links.
func graphOf(hosts []int32, links [][]int32, seeds ...int32) *LinkGraph {
	g := &LinkGraph{URLs: make([]string, len(hosts)), Hosts: hosts, Off: []int32{0}, Seeds: seeds}
	for _, l := range links {
		g.To = append(g.To, l...)
		g.Off = append(g.Off, int32(len(g.To)))
	}
	return g
}

// PageRank on graphs small enough to solve by hand, damping 0.85.
func TestPageRankKnownAnswers(t *testing.T) {
	for _, tc := range []struct {
		name  string
		links [][]int32
		want  []float64
	}{
		// A and B link each other, C links A and nothing links C:
		// pC = 0.15/3 = 0.05, pB = 0.05 + 0.85 pA, pA = 0.05 + 0.85 (pB + pC),
		// so pA = 0.135/0.2775 = 18/37.
		{"pair-and-feeder", [][]int32{{1}, {0}, {0}}, []float64{18.0 / 37, 0.05 + 0.85*18/37, 0.05}},
		// A links B, B links nothing: B's mass is spread over both, so
		// pA = 0.075 + 0.425 pB = 0.5/1.425 = 20/57.
		{"dangling", [][]int32{{1}, {}}, []float64{20.0 / 57, 37.0 / 57}},
		// A cycle: every page alike.
		{"cycle", [][]int32{{1}, {2}, {3}, {0}}, []float64{0.25, 0.25, 0.25, 0.25}},
		// A links B twice and C once: each entry of To is one link.
		{"repeated-link", [][]int32{{1, 1, 2}, {0}, {0}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := graphOf(make([]int32, len(tc.links)), tc.links, 0)
			pr := g.PageRank(0.85, 1e-13)
			sum := 0.0
			for _, p := range pr {
				sum += p
			}
			if math.Abs(sum-1) > 1e-9 {
				t.Errorf("ranks %v sum to %v, want 1", pr, sum)
			}
			if tc.want == nil {
				// B gets two thirds of A's share, C one third.
				if b, c := pr[1]-0.05, pr[2]-0.05; math.Abs(b-2*c) > 1e-9 {
					t.Errorf("ranks %v: B's links-in %v, want twice C's %v", pr, b, c)
				}
				return
			}
			for i := range tc.want {
				if math.Abs(pr[i]-tc.want[i]) > 1e-9 {
					t.Errorf("ranks %v, want %v", pr, tc.want)
					break
				}
			}
		})
	}
}

// Two hosts: a0 (a seed) links a1, a2, a3 and b1; b0 (a seed) links b2.
// Ids: a0..a3 are 0..3, b0..b2 are 4..6.
func twoHostGraph() *LinkGraph {
	return graphOf([]int32{0, 0, 0, 0, 1, 1, 1},
		[][]int32{{1, 2, 3, 5}, {}, {}, {}, {6}, {}, {}}, 0, 4)
}

func TestBreadthFirstOrders(t *testing.T) {
	g := twoHostGraph()
	if got, want := g.BreadthFirst(), []int32{0, 4, 1, 2, 3, 5, 6}; !slices.Equal(got, want) {
		t.Errorf("BreadthFirst = %v, want %v", got, want)
	}
	// The hosts take turns: a0 b0, a1 b1, a2 b2, a3.
	if got, want := g.BreadthFirstByHost(), []int32{0, 4, 1, 5, 2, 6, 3}; !slices.Equal(got, want) {
		t.Errorf("BreadthFirstByHost = %v, want %v", got, want)
	}
	if got, want := g.Depths(), []int32{0, 1, 1, 1, 0, 1, 1}; !slices.Equal(got, want) {
		t.Errorf("Depths = %v, want %v", got, want)
	}
	g.To[g.Off[0]+3] = 1 // a0 no longer links b1: no seed reaches it
	if d := g.Depths(); d[5] != -1 {
		t.Errorf("Depths of a page no seed reaches = %d, want -1", d[5])
	}
	if o := g.BreadthFirstByHost(); slices.Contains(o, 5) || len(o) != 6 {
		t.Errorf("BreadthFirstByHost = %v: want the six pages the seeds reach", o)
	}
}

func TestRankOrdersAndMass(t *testing.T) {
	g := twoHostGraph()
	rank := []float64{0.1, 0.3, 0.05, 0.05, 0.2, 0.25, 0.05}
	best := RankOrder(rank)
	if want := []int32{1, 5, 4, 0, 2, 3, 6}; !slices.Equal(best, want) {
		t.Errorf("RankOrder = %v, want %v (ties by id)", best, want)
	}
	// Host a's pages by rank are a1 a0 a2 a3, host b's b1 b0 b2.
	if got, want := g.PoliteRankOrder(rank), []int32{1, 5, 0, 4, 2, 6, 3}; !slices.Equal(got, want) {
		t.Errorf("PoliteRankOrder = %v, want %v", got, want)
	}
	for _, tc := range []struct {
		order []int32
		k     int
		want  float64
		ok    bool
	}{
		{best, 0, 0, true},
		{best, 2, 0.55, true},
		{best, 3, 0.75, true},
		{best, 7, 1, true},
		{best, 8, 0, false},
		{g.BreadthFirstByHost(), 2, 0.3, true},
		{[]int32{6, 2}, 3, 0, false},
	} {
		got, ok := MassAt(tc.order, rank, tc.k)
		if ok != tc.ok || math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("MassAt(%v, k=%d) = %v, %v; want %v, %v", tc.order, tc.k, got, ok, tc.want, tc.ok)
		}
	}
}
