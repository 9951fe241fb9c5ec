package crawl

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"time"

	"github.com/weft-crawler/weft/internal/canon"
	"github.com/weft-crawler/weft/internal/fetch"
	"github.com/weft-crawler/weft/internal/frontier"
	"github.com/weft-crawler/weft/internal/judge"
	"github.com/weft-crawler/weft/internal/partition"
	"github.com/weft-crawler/weft/internal/report"
	"github.com/weft-crawler/weft/internal/robotstxt"
	"github.com/weft-crawler/weft/internal/scope"
	"github.com/weft-crawler/weft/internal/seeds"
	"github.com/weft-crawler/weft/internal/seen"
)

// maxSeedFailures is how many unfetched seeds the summary names.
const maxSeedFailures = 20

// reportSeeds counts the seeds that got a response (any status: a
// redirect is a response) and names those that did not, with why, from
// what admission said of them (seedWhy) and what their URL records say.
// A node of a cluster reports the seeds whose hosts it owns: the others
// are its peers' to fetch.
func (c *Crawler) reportSeeds(sum *Summary) {
	sum.SeedStatus = c.seedReg.List(0, report.MaxSeedStatus, true)
	sum.SeedTotals = c.seedReg.Totals(true)
	for _, u := range c.seeds {
		if !c.cluster.Owns(u.Authority) {
			continue
		}
		sum.Seeds++
		part := partition.Of(u.Authority, c.cfg.Partitions)
		rec, found, err := c.state.DB.GetURL(uint16(part), u.Authority, seen.KeyOf(u.String))
		if err == nil && found && rec.LastStatus > 0 {
			sum.SeedsFetched++
			continue
		}
		f := SeedFailure{URL: u.String, Reason: c.seedWhy[u.String]}
		switch {
		case f.Reason != "":
		case found && rec.LastOutcome != "":
			f.Reason = rec.LastOutcome
		default:
			f.Reason = "queued"
			f.Detail = "not fetched in this run: it is queued for the next one on this data directory"
		}
		c.explainSeed(&f, u)
		sum.SeedsNotFetched++
		if len(sum.SeedFailures) < maxSeedFailures {
			sum.SeedFailures = append(sum.SeedFailures, f)
		}
	}
}

// explainSeed says more of a seed's failure: the address the guard
// refused and the flag that allows it, or what its robots.txt got.
func (c *Crawler) explainSeed(f *SeedFailure, u canon.URL) {
	switch {
	case f.Reason == judge.Forbidden || strings.HasSuffix(f.Reason, ":refused") || c.robotsKind(u) == "refused":
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		addr, err := c.fetcher.Lookup(ctx, strings.Trim(u.Host, "[]"))
		if err != nil {
			f.Detail = "its address is refused by the address guard"
			break
		}
		f.Detail = fmt.Sprintf("its address %s is %s, which weft refuses by default", addr, fetch.AddressKind(addr))
		for _, p := range c.cfg.Fetch.DenyCIDRs {
			if p.Contains(addr) {
				f.Detail = fmt.Sprintf("its address %s is in --deny-cidr %s", addr, p)
				return
			}
		}
		f.Hint = "--allow-cidr " + netip.PrefixFrom(addr, addr.BitLen()).String()
	case f.Reason == judge.Unreachable:
		if h, ok := c.robots.History(robotstxt.Origin(u.Scheme, u.Authority)); ok && h.Err != "" {
			f.Detail = "its robots.txt could not be fetched: " + h.Err
		} else {
			f.Detail = "its robots.txt could not be fetched"
		}
	case f.Reason == judge.Robots:
		f.Detail = "its robots.txt disallows it"
	case f.Reason == judge.CrawlDelay:
		if pol := c.robots.Cached(robotstxt.Origin(u.Scheme, u.Authority), time.Now()); pol != nil && pol.Err != "" {
			f.Detail = "its robots.txt's " + pol.Err
		} else {
			f.Detail = "its robots.txt asks for a longer Crawl-delay than the crawl waits"
		}
		f.Hint = "--max-crawl-delay 0"
	}
}

// robotsKind is the kind of error the robots.txt of u's origin last
// failed with, "" if it did not fail or is not in memory.
func (c *Crawler) robotsKind(u canon.URL) string {
	h, ok := c.robots.History(robotstxt.Origin(u.Scheme, u.Authority))
	if !ok || h.Failures == 0 || h.Status != 0 {
		return ""
	}
	kind, _, _ := strings.Cut(h.Err, ":")
	return kind
}

// AddSeeds offers urls to the running crawl as seeds, high priority or
// normal: each goes through what a seed of the command line does (the
// canonicaliser, the scheme check, the SSRF guard for an address known
// without DNS, the filters and Include/Exclude, the cached robots.txt, the
// host cap, the seen set), and one accepted widens the scope as a seed
// does, for this run and after a restart. opts, nil or one per URL, are
// the seeds' own limits (package seeds): they hold after a restart too. It
// returns a verdict per URL, in order.
func (c *Crawler) AddSeeds(urls []string, opts []seeds.Options, high bool) ([]Verdict, error) {
	ph := c.life.Hold()
	defer c.life.Release()
	if !ph.Running {
		return nil, ErrNotRunning
	}
	prio := frontier.Normal
	if high {
		prio = frontier.High
	}
	pb := c.state.NewBatch()
	out := make([]Verdict, len(urls))
	for i, raw := range urls {
		out[i].URL = raw
		u, err := canon.ParseSeed(c.canon, raw)
		if err != nil {
			out[i].Reason, out[i].Err = judge.Invalid, err
			c.judge.Count(judge.Invalid, 1)
			continue
		}
		out[i].URL = u.String
		if r := c.scope.CheckSeed(u); r != "" {
			out[i].Reason = string(r)
			if r == scope.ReasonFilter {
				out[i].Err = c.scope.ExplainFilter(u, false)
			}
			c.judge.Count(string(r), 1)
			continue
		}
		var o seeds.Options
		if i < len(opts) {
			o = opts[i]
		}
		id, err := c.seedReg.Add(u, o)
		if err != nil {
			out[i].Reason, out[i].Err = judge.Invalid, err
			c.judge.Count(judge.Invalid, 1)
			continue
		}
		c.seedReg.Record(pb.Batch, id)
		switch why := c.admit(pb, judge.Candidate{URL: u, Priority: prio, Seed: uint32(id)}); why {
		case "", judge.Forwarded:
			// Accepted (queued, or by its host's owner): its scope widens.
			c.widen(pb, uint32(id), u)
		default:
			out[i].Reason = why
		}
	}
	if err := pb.Commit(c.seen, c.front); err != nil {
		if !errors.Is(err, ErrStopping) { // the seeds are refused; the crawl ends as it was stopping anyway
			c.fail(fmt.Errorf("crawl: record seeds: %w", err))
		}
		return nil, err
	}
	return out, nil
}
