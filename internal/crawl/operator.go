package crawl

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/weft-crawler/weft/internal/frontier"
	recent "github.com/weft-crawler/weft/internal/history"
	"github.com/weft-crawler/weft/internal/judge"
	"github.com/weft-crawler/weft/internal/partition"
	"github.com/weft-crawler/weft/internal/policy"
	"github.com/weft-crawler/weft/internal/scope"
	"github.com/weft-crawler/weft/internal/store"
)

// Operator is the crawl as its operator sees and steers it, through the
// HTTP API or a program: what it is doing, its hosts, URLs and pages,
// pausing, seeds, per-host holds and policies, and the leases of external
// fetchers. Crawler.Operator returns it; its methods are safe for
// concurrent use, while Run runs and after it (what needs the running
// crawl says so).
type Operator struct{ c *Crawler }

// Operator returns the crawl as its operator steers it.
func (c *Crawler) Operator() Operator { return Operator{c} }

// Live returns a snapshot of the crawl, from New on. It is safe to call
// from any goroutine.
func (o Operator) Live() Live {
	c := o.c
	sum := c.summary()
	var fs frontier.Stats
	if c.frontierUp() {
		fs = c.front.Stats() // after its Run, the snapshot it left
	}
	sum.Queued = fs.Queued + fs.InFlight
	sum.WARCFiles, sum.WARCBytes = c.warc.Files(), c.warc.Bytes()
	l := Live{Summary: sum, Frontier: fs, Paused: c.pause.paused(), Outcomes: c.flog.ByOutcome()}
	if n, ok := c.state.DB.Queued(); ok {
		l.Stored = &n
	}
	return l
}

// Pause stops the workers taking new leases; the fetches in flight finish,
// the queues and every host's clock are kept, and the recrawl scanner goes
// on. Pausing a paused crawl does nothing.
func (o Operator) Pause() { o.c.pause.set(true) }

// Resume lets the workers take leases again.
func (o Operator) Resume() { o.c.pause.set(false) }

// URLs returns up to limit URL records in key order (partition, host,
// hash) after the position after (from the start when it is nil): every
// host's, or only host's; every status, or only status's (when it is not
// zero). It reads at most maxURLScan records, and returns where it
// stopped, to go on from, or nil when nothing is left.
func (o Operator) URLs(host string, status store.URLStatus, after *store.URLPos, limit int) ([]store.URLPos, []store.URLRecord, *store.URLPos, error) {
	c := o.c
	c.liveMu.RLock()
	defer c.liveMu.RUnlock()
	if c.closed {
		return nil, nil, nil, ErrNotRunning
	}
	var part uint16
	if host != "" {
		part = uint16(partition.Of(host, c.cfg.Partitions))
	}
	var pos []store.URLPos
	var recs []store.URLRecord
	var last *store.URLPos
	read, ended := 0, true
	err := c.state.DB.ScanURLsAfter(host, part, after, func(p store.URLPos, r store.URLRecord) bool {
		if len(recs) >= limit || read >= maxURLScan {
			ended = false
			return false
		}
		read++
		last = &p
		if status == 0 || r.Status == status {
			pos, recs = append(pos, p), append(recs, r)
		}
		return true
	})
	if err != nil {
		return nil, nil, nil, err
	}
	if ended {
		last = nil
	}
	return pos, recs, last, nil
}

// AddSeeds offers urls to the running crawl as seeds, high priority or
// normal: each goes through what a seed of the command line does (the
// canonicaliser, the scheme check, the SSRF guard for an address known
// without DNS, the filters and Include/Exclude, the cached robots.txt, the
// host cap, the seen set), and one accepted widens the scope as a seed
// does, for this run and after a restart. It returns a verdict per URL,
// in order.
func (o Operator) AddSeeds(urls []string, high bool) ([]Verdict, error) {
	c := o.c
	c.liveMu.RLock()
	defer c.liveMu.RUnlock()
	if !c.running {
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
		u, err := ParseSeed(c.canon, raw)
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
		switch why := c.admit(pb, judge.Candidate{URL: u, Priority: prio}); why {
		case "", judge.Forwarded:
			// Accepted (queued, or by its host's owner): its scope widens.
			c.scope.AddSeed(u)
			pb.WidenScope(u.String)
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

// Host returns what the crawl knows of host (an authority, host[:port],
// as URLs are queued under).
func (o Operator) Host(host string) HostStatus {
	c := o.c
	if h, err := policy.NormalHost(host); err == nil {
		host = h
	}
	st := HostStatus{Host: host, Robots: c.robots.CachedHost(host, time.Now())}
	if c.frontierUp() {
		st.Frontier = c.front.Host(host)
	}
	hs, _ := c.hostCap.Get(host)
	st.Accepted = hs.Accepted
	cl := st.Frontier.Clock
	st.Gap = max(c.cfg.Delay, cl.CrawlDelay, cl.Backoff)
	st.Known = st.Frontier.Known || st.Robots != nil || st.Accepted > 0
	return st
}

// HoldHost pauses one host (on) or resumes it: its queue and clock are
// kept, a fetch in flight finishes, and the rest of the crawl goes on. A
// host not known yet is held when its first URL comes. A crawl that is
// not continuous does not drain while a host with URLs is held.
//
// The host is named as in its URLs (policy.NormalHost: lowercase,
// punycode, no default port); it returns that name, or why host is not one.
func (o Operator) HoldHost(host string, on bool) (string, error) {
	c := o.c
	h, err := policy.NormalHost(host)
	if err != nil {
		return "", err
	}
	c.front.Hold(h, on)
	return h, nil
}

// SetPolicy sets host's policy while the crawl runs, replacing any it had,
// and keeps it in the store so that a restart keeps it. A policy may only
// tighten the crawl (a longer delay, fewer URLs): an error says why one
// is refused, and changes nothing.
func (o Operator) SetPolicy(host string, p policy.Policy) error {
	c := o.c
	c.liveMu.RLock()
	defer c.liveMu.RUnlock()
	if c.closed {
		return ErrNotRunning
	}
	h, err := policy.NormalHost(host)
	if err != nil {
		return err
	}
	// Checked first, kept next, applied last: a policy refused, or not
	// kept, is not in force either.
	if err := policy.NewSet(c.cfg.policyLimits()).Put(h, p); err != nil {
		return err
	}
	v, err := json.Marshal(p)
	if err != nil {
		return err
	}
	b := c.state.DB.NewBatch()
	b.PutMeta(metaPolicyPrefix+h, v)
	if err := b.Commit(true); err != nil {
		return fmt.Errorf("crawl: keep the policy of %s: %w", h, err)
	}
	if err := c.cfg.Policies.Put(h, p); err != nil {
		return err
	}
	if c.frontierUp() { // else the clocks read from the store get it at their next request
		c.policies.rearm(h)
	}
	host = h
	c.log.Info("operator policy set through the API", "host", host, "delay", time.Duration(p.Delay), "disallow", p.Disallow, "max_urls", p.MaxURLs)
	return nil
}

// DeletePolicy removes host's policy, from the store too, and reports
// whether it had one.
func (o Operator) DeletePolicy(host string) (bool, error) {
	c := o.c
	c.liveMu.RLock()
	defer c.liveMu.RUnlock()
	if c.closed {
		return false, ErrNotRunning
	}
	h, err := policy.NormalHost(host)
	if err != nil {
		return false, err
	}
	had := c.cfg.Policies.Delete(h)
	if c.frontierUp() { // else the clocks read from the store get it at their next request
		c.policies.rearm(h)
	}
	b := c.state.DB.NewBatch()
	b.DeleteMeta(metaPolicyPrefix + h)
	if err := b.Commit(true); err != nil {
		return had, fmt.Errorf("crawl: forget the policy of %s: %w", host, err)
	}
	return had, nil
}

// Policy returns host's own policy, and false if it has none.
func (o Operator) Policy(host string) (policy.Policy, bool) {
	c := o.c
	h, err := policy.NormalHost(host)
	if err != nil {
		return policy.Policy{}, false
	}
	p, ok := c.cfg.Policies.All()[h]
	return p, ok
}

// Recent returns the last fetches (at most 100), newest first.
func (o Operator) Recent() []Fetch { return o.c.flog.Last() }

// Activity returns what the crawl keeps of host's recent activity: its
// counts, last fetches and parks, while it is among the hosts fetched most
// recently (history.Hosts); ok is false otherwise.
func (o Operator) Activity(host string) (recent.Activity, bool) {
	if h, err := policy.NormalHost(host); err == nil {
		host = h
	}
	return o.c.flog.Hosts().Of(host)
}

// Hosts returns what the crawl knows of the hosts its frontier holds, those
// with the most URLs in memory first, at most limit.
func (o Operator) Hosts(limit int) []HostStatus {
	c := o.c
	if !c.frontierUp() {
		return nil
	}
	infos := c.front.Hosts(limit)
	out := make([]HostStatus, 0, len(infos))
	now := time.Now()
	for _, f := range infos {
		st := HostStatus{Host: f.Name, Known: true, Frontier: f, Robots: c.robots.CachedHost(f.Name, now)}
		hs, _ := c.hostCap.Get(f.Name)
		st.Accepted = hs.Accepted
		st.Gap = max(c.cfg.Delay, f.Clock.CrawlDelay, f.Clock.Backoff)
		out = append(out, st)
	}
	return out
}

// Page returns the record and the captures of the URL at pos (as URLs
// lists them).
func (o Operator) Page(pos store.URLPos) (Page, error) {
	c := o.c
	c.liveMu.RLock()
	defer c.liveMu.RUnlock()
	if c.closed {
		return Page{}, ErrNotRunning
	}
	r, ok, err := c.state.DB.GetURL(pos.Part, pos.Host, pos.Hash)
	if err != nil {
		return Page{}, err
	}
	if !ok {
		return Page{}, ErrUnknownURL
	}
	p := Page{Record: r}
	u, err := c.canon.Parse(r.URL)
	if err != nil {
		return p, nil
	}
	err = c.state.DB.Captures(u.SURT(), func(cr store.CaptureRecord) bool {
		if len(p.Captures) == maxPageCaptures { // keep the newest: they come oldest first
			p.Captures = append(p.Captures[:0], p.Captures[1:]...)
		}
		p.Captures = append(p.Captures, cr)
		return true
	})
	slices.Reverse(p.Captures)
	return p, err
}
