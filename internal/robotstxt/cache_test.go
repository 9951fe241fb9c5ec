package robotstxt

import (
	"testing"
	"time"

	"github.com/weft-crawler/weft/internal/robots"
)

func TestOrigin(t *testing.T) {
	o := Origin("https", "a.test:8443")
	if o != "https://a.test:8443" || Authority(o) != "a.test:8443" {
		t.Errorf("Origin %q, Authority %q", o, Authority(o))
	}
	if s, a := splitOrigin(o); s != "https" || a != "a.test:8443" {
		t.Errorf("splitOrigin: %q, %q", s, a)
	}
}

// record decides origin's file in c as a fetch at now would.
func record(c *Cache, origin string, pol *robots.Policy, now time.Time) {
	e := c.entry(origin)
	e.hist.Record(pol)
	c.verdictOf(e, now)
}

// An operator asking about a host means its https file, else its http one.
func TestCachedHost(t *testing.T) {
	c := NewCache(CacheConfig{Partitions: 1, Retry: robots.Retry{TTL: time.Hour, Attempts: 1, Wait: time.Minute}})
	now := time.Now()
	plain := robots.NoRulesPolicy(404, now)
	record(c, Origin("http", "a.test"), plain, now)
	if got := c.CachedHost("a.test", now); got != plain {
		t.Errorf("http only: %v", got)
	}
	secure := robots.FromStatus(200, []byte("User-agent: *\nDisallow: /\n"), token, now)
	record(c, Origin("https", "a.test"), secure, now)
	if got := c.CachedHost("a.test", now); got != secure {
		t.Errorf("both: %v; want the https file's", got)
	}
	if got := c.Cached(Origin("http", "a.test"), now.Add(2*time.Hour)); got != nil {
		t.Errorf("after its TTL: %v; want none", got)
	}
}

// A verdict that disallows everything holds at least as long as the
// clock of the host it was found on; one with rules is left alone.
func TestHoldUntil(t *testing.T) {
	c := NewCache(CacheConfig{Partitions: 1, Retry: robots.Retry{TTL: time.Hour, Attempts: 1, Wait: time.Minute}})
	now := time.Now()
	down, open := Origin("http", "down.test"), Origin("http", "open.test")
	record(c, down, robots.DisallowAllPolicy(503, "", now), now)
	record(c, open, robots.NoRulesPolicy(404, now), now)
	later := now.Add(3 * time.Hour)
	c.HoldUntil(down, later)
	c.HoldUntil(open, later)
	c.HoldUntil(Origin("http", "unknown.test"), later)
	if pol := c.Cached(down, later.Add(-time.Second)); pol == nil || pol.Outcome != robots.DisallowAll {
		t.Errorf("down.test before its clock: %v; want disallow-all held", pol)
	}
	if pol := c.Cached(down, later); pol != nil {
		t.Errorf("down.test at its clock: %v; want it expired", pol)
	}
	if pol := c.Cached(open, later.Add(-time.Second)); pol != nil {
		t.Errorf("open.test: %v; want its verdict's own expiry", pol)
	}
}

// An entry half way through a redirect chain is not evicted, whatever
// the bound.
func TestChainPinned(t *testing.T) {
	c := NewCache(CacheConfig{Partitions: 1, Bound: 1, Retry: robots.Retry{TTL: time.Hour, Attempts: 1, Wait: time.Minute}})
	e := c.entry(Origin("http", "a.test"))
	e.pending = "http://a.test/moved.txt"
	e.chain.Store(true)
	c.entry(Origin("http", "b.test"))
	if got := c.entry(Origin("http", "a.test")); got != e {
		t.Error("a.test's chain was evicted")
	}
}

// A file asking for a longer Crawl-delay than the crawl waits refuses its
// host (robots.DelayRefusedPolicy); one at the most, or any with no most,
// is judged by its rules.
func TestMaxCrawlDelay(t *testing.T) {
	retry := robots.Retry{TTL: time.Hour, Attempts: 1, Wait: time.Minute}
	now := time.Now()
	file := func(delay string) *robots.Policy {
		return robots.FromStatus(200, []byte("User-agent: *\nDisallow: /private/\nCrawl-delay: "+delay+"\n"), token, now)
	}
	c := NewCache(CacheConfig{Partitions: 1, Retry: retry, MaxCrawlDelay: time.Minute})
	record(c, Origin("http", "slow.test"), file("61"), now)
	record(c, Origin("http", "limit.test"), file("60"), now)
	got := c.Cached(Origin("http", "slow.test"), now)
	if got == nil || !got.DelayRefused || got.Outcome != robots.DisallowAll || got.Allowed("/") || got.CrawlDelay != 0 ||
		got.Err != "Crawl-delay 1m1s is longer than the crawl waits for a host (1m0s)" {
		t.Errorf("61 s over a most of 60 s: %+v; want the host refused, the delay named", got)
	}
	if got := c.Cached(Origin("http", "limit.test"), now); got == nil || got.DelayRefused || !got.Allowed("/") || got.Allowed("/private/x") {
		t.Errorf("60 s at a most of 60 s: %+v; want its rules", got)
	}
	if got := c.Cached(Origin("http", "slow.test"), now.Add(2*time.Hour)); got != nil {
		t.Errorf("after its TTL: %+v; want none, the file fetched again", got)
	}

	whole := NewCache(CacheConfig{Partitions: 1, Retry: retry})
	record(whole, Origin("http", "slow.test"), file("86400"), now)
	if got := whole.Cached(Origin("http", "slow.test"), now); got == nil || got.DelayRefused || got.CrawlDelay != 24*time.Hour {
		t.Errorf("no most: %+v; want a day's Crawl-delay, honoured", got)
	}
}
