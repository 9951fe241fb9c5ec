package crawl

import (
	"testing"

	"github.com/weft-crawler/weft/internal/archive"
	"github.com/weft-crawler/weft/internal/fetch"
	"github.com/weft-crawler/weft/internal/fetchlog"
	"github.com/weft-crawler/weft/internal/importance"
	"github.com/weft-crawler/weft/internal/judge"
	"github.com/weft-crawler/weft/internal/seen"
	"github.com/weft-crawler/weft/internal/store"
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

// What a page fetched for the first time showed its family and walls: a
// copy of the page that linked it (exact, a revisit, or near) is an echo
// of it; a copy of another page, a copy; a page that says noindex and
// nofollow, closed; a search's results, a search; a page read,
// distinct.
func TestPageContent(t *testing.T) {
	const via = "http://a.test/node/7"
	for _, c := range []struct {
		name string
		p    pageRun
		want judge.Content
	}{
		{"revisit of the linking page", pageRun{cp: archive.Capture{Revisit: true, First: store.DigestRecord{URL: via}}}, judge.Echo},
		{"revisit of another page", pageRun{cp: archive.Capture{Revisit: true, First: store.DigestRecord{URL: "http://a.test/node/8"}}}, judge.Copy},
		{"near copy of the linking page", pageRun{copied: true, rec: fetchlog.Record{NearDupOf: via}}, judge.Echo},
		{"near copy of another page", pageRun{copied: true, rec: fetchlog.Record{NearDupOf: "http://a.test/"}}, judge.Copy},
		{"near copy of the linking page, itself a first capture", pageRun{copied: true, cp: archive.Capture{First: store.DigestRecord{URL: "http://a.test/x"}},
			rec: fetchlog.Record{NearDupOf: via}}, judge.Echo},
		{"closed", pageRun{read: true, rec: fetchlog.Record{NoIndex: true, NoFollow: true}}, judge.Closed},
		{"noindex alone", pageRun{read: true, rec: fetchlog.Record{NoIndex: true}}, judge.Distinct},
		{"a search's results", pageRun{read: true, rec: fetchlog.Record{Search: true, NoIndex: true}}, judge.Search},
		{"a search's results, closed", pageRun{read: true, rec: fetchlog.Record{Search: true, NoIndex: true, NoFollow: true}}, judge.Closed},
		{"a recrawl", pageRun{copied: true, prev: store.URLRecord{Digest: [20]byte{1}}}, judge.NotWeighed},
	} {
		p := c.p
		p.resp, p.l.Via = &fetch.Response{}, via
		if got := p.content(); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
