package crawl

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"time"

	"github.com/weft-crawler/weft/internal/canon"
	"github.com/weft-crawler/weft/internal/judge"
	"github.com/weft-crawler/weft/internal/partition"
	"github.com/weft-crawler/weft/internal/robotstxt"
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
		f.Detail = fmt.Sprintf("its address %s is %s, which weft refuses by default", addr, addressKind(addr))
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

// addressKind names the special range an address the guard refuses is
// in.
func addressKind(a netip.Addr) string {
	switch {
	case a.IsLoopback():
		return "a loopback address"
	case a.IsPrivate():
		return "a private address"
	case a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast():
		return "a link-local address"
	case a.IsUnspecified():
		return "the unspecified address"
	case a.IsMulticast():
		return "a multicast address"
	}
	return "in a special-purpose range (carrier-grade NAT, benchmarking, documentation, metadata...)"
}
