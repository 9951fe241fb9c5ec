package crawl

import (
	"testing"

	"github.com/weft-crawler/weft/internal/importance"
	"github.com/weft-crawler/weft/internal/judge"
	"github.com/weft-crawler/weft/internal/seen"
)

// TestRankKeepsTheDepthFoundAt: a page whose depth Shallowest lowered
// ranks its links by the depth it was found at, so that the order is
// what it was (lowered, a query-routed shop's facets came before their
// parameter was learnt barren: 539 requests instead of 278); the depth
// the links are queued at is the lowered one's.
func TestRankKeepsTheDepthFoundAt(t *testing.T) {
	est := importance.New(0, 1000)
	k := seen.KeyOf("http://a.test/x")
	votes := importance.NewVotes()
	votes.Add(k, importance.SameHost)
	est.Credit(seen.KeyOf("http://a.test/"), votes)
	cash, _, _ := votes.Of(k)
	p := &pageRun{votes: votes, deeper: 3}
	f := &found{Candidate: judge.Candidate{Key: k, Depth: 2}}
	rankOf(p, f)
	if want := importance.Rank(cash, 5); f.Rank != want || f.Depth != 2 {
		t.Errorf("rank %d at depth %d, want %d (the prior of depth 5) at depth 2", f.Rank, f.Depth, want)
	}
	if importance.Rank(cash, 2) == importance.Rank(cash, 5) {
		t.Fatal("the two depths' priors are alike: the test tells nothing")
	}
}
