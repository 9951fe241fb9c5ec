package crawl

import (
	"strings"

	"github.com/weft-crawler/weft/internal/canon"
	"github.com/weft-crawler/weft/internal/judge"
	"github.com/weft-crawler/weft/internal/seeds"
	"github.com/weft-crawler/weft/internal/state"
)

// widen makes u, a seed or where a seed redirected, part of the scope of
// seed: its own scope when it has one, else the crawl's; a restart
// widens it the same way.
func (c *Crawler) widen(pb *state.Batch, seed uint32, u canon.URL) {
	if !c.seedReg.Widen(seeds.ID(seed), u) {
		c.scope.AddSeed(u)
	}
	pb.WidenScope(u.String, seed)
}

// overSeedBudget reserves a page of p's seed's budget for p if it is a
// page, and reports whether that budget is spent.
func (c *Crawler) overSeedBudget(p *pageRun) bool {
	if notPage(p.l) {
		return false
	}
	if !c.seedReg.Reserve(seeds.ID(p.l.Seed)) {
		return true
	}
	p.reserved = true
	return false
}

// countSeed stages what p's lease adds to its seed's counts in its batch
// (pages that got a response, bytes, failures), and returns what to call
// once the batch is committed or not. A page reserved but not fetched
// gives its place back.
func (c *Crawler) countSeed(p *pageRun) func(committed bool) {
	l, lo := p.l, &p.out
	if p.reserved && (lo.res.Retry || lo.status == 0) {
		c.seedReg.Release(seeds.ID(l.Seed))
	}
	if lo.res.Retry || l.Seed == 0 || l.RobotsFor != "" {
		return func(bool) {}
	}
	n := seeds.Count{Page: !notPage(l) && lo.status > 0,
		Failed: lo.status >= 500 || strings.HasPrefix(lo.outcome, "error:") || lo.outcome == judge.Unreachable || lo.outcome == judge.CrawlDelay ||
			lo.outcome == judge.Forbidden}
	if p.resp != nil {
		n.Bytes = int64(len(p.resp.Body))
	}
	return c.seedReg.Stage(p.pb.Batch, seeds.ID(l.Seed), n)
}

// SeedList is the state of at most limit seeds from offset, in the order
// they were given (the command line's, then the API's), the number of
// seeds and the totals of all.
func (c *Crawler) SeedList(offset, limit int) ([]seeds.Status, int, seeds.Totals) {
	ended := c.life.Now().Closed
	return c.seedReg.List(offset, limit, ended), c.seedReg.Len(), c.seedReg.Totals(ended)
}
