package crawl

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"weft/internal/frontier"
	"weft/internal/partition"
	"weft/internal/policy"
	"weft/internal/robots"
	"weft/internal/scope"
	"weft/internal/store"
)

// Live is what a running crawl can tell an operator at any moment: its
// counters so far, its frontier, and whether it is paused.
type Live struct {
	Summary
	Frontier frontier.Stats
	Paused   bool
	// Outcomes counts the page fetches by outcome, as the fetch log says
	// ("ok", "redirect", "revisit", "not-modified", "external",
	// "error:KIND", ...).
	Outcomes map[string]int64
}

// Live returns a snapshot of the crawl, from New on. It is safe to call
// from any goroutine.
func (c *Crawler) Live() Live {
	sum := c.summary()
	var fs frontier.Stats
	if c.frontierUp() {
		fs = c.front.Stats() // after its Run, the snapshot it left
	}
	sum.Queued = fs.Queued + fs.InFlight
	sum.WARCFiles, sum.WARCBytes = c.warc.Files(), c.warc.Bytes()
	return Live{Summary: sum, Frontier: fs, Paused: c.pause.paused(), Outcomes: c.flog.byOutcome()}
}

// Pause stops the workers taking new leases; the fetches in flight finish,
// the queues and every host's clock are kept, and the recrawl scanner goes
// on. Pausing a paused crawl does nothing.
func (c *Crawler) Pause() { c.pause.set(true) }

// Resume lets the workers take leases again.
func (c *Crawler) Resume() { c.pause.set(false) }

// gate holds the workers while the crawl is paused.
type gate struct {
	mu   sync.Mutex
	shut bool
	open chan struct{} // closed when the gate opens; nil while it is open
}

func (g *gate) set(shut bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case shut && !g.shut:
		g.open = make(chan struct{})
	case !shut && g.shut:
		close(g.open)
		g.open = nil
	}
	g.shut = shut
}

func (g *gate) paused() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.shut
}

// wait returns when the gate is open, or with ctx's error.
func (g *gate) wait(ctx context.Context) error {
	g.mu.Lock()
	open := g.open
	g.mu.Unlock()
	if open == nil {
		return nil
	}
	select {
	case <-open:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (c *Crawler) setRunning(on bool) {
	c.liveMu.Lock()
	c.running = on
	c.liveMu.Unlock()
	if on {
		c.readyOnce.Do(func() { close(c.ready) })
	}
}

// Ready is closed once Run takes work (Offer, Adopt, AddSeeds): its store
// is open and its seeds are in.
func (c *Crawler) Ready() <-chan struct{} { return c.ready }

// Done is closed once the crawl has stopped taking work for good: Run has
// ended, or the Crawler was discarded. It may close without Ready having.
func (c *Crawler) Done() <-chan struct{} { return c.done }

// Discard releases what New opened, for a Crawler that will not Run.
func (c *Crawler) Discard() error {
	c.liveMu.Lock()
	c.closed = true
	c.liveMu.Unlock()
	c.doneOnce.Do(func() { close(c.done) })
	return c.close(0) // a crawl that never ran: its backlog of uploads waits for the next start
}

// maxURLScan bounds the records one URLs call reads looking for a status.
const maxURLScan = 100_000

// URLs returns up to limit URL records in key order (partition, host,
// hash) after the position after (from the start when it is nil): every
// host's, or only host's; every status, or only status's (when it is not
// zero). It reads at most maxURLScan records, and returns where it
// stopped, to go on from, or nil when nothing is left.
func (c *Crawler) URLs(host string, status store.URLStatus, after *store.URLPos, limit int) ([]store.URLPos, []store.URLRecord, *store.URLPos, error) {
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
	err := c.state.db.ScanURLsAfter(host, part, after, func(p store.URLPos, r store.URLRecord) bool {
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

// Offered is a URL one node of a cluster found for a host another owns
// (Cluster.Owns, Cluster.Forward), as the owner's Offer takes it.
type Offered struct {
	URL      string            `json:"url"` // canonical
	Depth    int               `json:"depth"`
	Hops     int               `json:"hops,omitempty"`
	Priority frontier.Priority `json:"priority"`
	Via      string            `json:"via,omitempty"`
	// Resource: fetched for what it is (an image, a sitemap), so the
	// extension rule does not apply.
	Resource bool `json:"resource,omitempty"`
}

// setHeld records that partition p is held, for the recrawl scan: a
// held partition's URLs are not queued again (another node owns them
// and schedules their recrawls).
func (c *Crawler) setHeld(p int, on bool) {
	if p >= 0 && p < len(c.partHeld) {
		c.partHeld[p].Store(on)
	}
}

// heldPart reports whether partition p is held.
func (c *Crawler) heldPart(p int) bool {
	return p >= 0 && p < len(c.partHeld) && c.partHeld[p].Load()
}

// EndDrained ends a running crawl as drained ("drained" in its
// summary), though its frontier, kept alive, never drains by itself: a
// node of a cluster whose cluster has found the whole crawl done. The
// leases out (none, on a drained crawl) run to their end.
func (c *Crawler) EndDrained() {
	c.liveMu.RLock()
	defer c.liveMu.RUnlock()
	if !c.running {
		return
	}
	c.endedDrained.Store(true)
	c.stopLeasing()
}

// Running reports whether Run is taking work (Offer, Adopt, AddSeeds).
func (c *Crawler) Running() bool {
	c.liveMu.RLock()
	defer c.liveMu.RUnlock()
	return c.running
}

// Partitions is the crawl's partition count: the one its state was
// created with, whatever Config said.
func (c *Crawler) Partitions() int { return c.cfg.Partitions }

// Verdict is what became of a URL offered as a seed.
type Verdict struct {
	URL    string // canonical when it parsed, else as given
	Reason string // "" when accepted; else a Reject* reason
	// Err says more of a RejectInvalid or RejectFilter, when there is
	// more to say: the canonicaliser's *canon.Error, ErrNotHTTP, or the
	// filter's *scope.FilterError.
	Err error
}

// ErrNotHTTP is what a Verdict's Err wraps for a URL whose scheme is not
// http or https.
var ErrNotHTTP = errors.New("only http and https URLs are crawled")

// ErrNotRunning is returned by AddSeeds once the crawl has stopped.
var ErrNotRunning = errors.New("crawl: not running")

// ErrStopping is what Cluster.Forward wraps when it gives up because its
// process is stopping.
var ErrStopping = errors.New("stopping")

// AddSeeds offers urls to the running crawl as seeds, high priority or
// normal: each goes through what a seed of the command line does (the
// canonicaliser, the scheme check, the SSRF guard for an address known
// without DNS, the filters and Include/Exclude, the cached robots.txt, the
// host cap, the seen set), and one accepted widens the scope as a seed
// does, for this run and after a restart. It returns a verdict per URL,
// in order.
func (c *Crawler) AddSeeds(urls []string, high bool) ([]Verdict, error) {
	c.liveMu.RLock()
	defer c.liveMu.RUnlock()
	if !c.running {
		return nil, ErrNotRunning
	}
	prio := frontier.Normal
	if high {
		prio = frontier.High
	}
	pb := c.state.newBatch()
	out := make([]Verdict, len(urls))
	for i, raw := range urls {
		out[i].URL = raw
		u, err := c.canon.Parse(raw)
		if err == nil && u.Scheme != "http" && u.Scheme != "https" {
			err = fmt.Errorf("crawl: scheme %q: %w", u.Scheme, ErrNotHTTP)
		}
		if err != nil {
			out[i].Reason, out[i].Err = RejectInvalid, err
			c.stats.reject(RejectInvalid)
			continue
		}
		out[i].URL = u.String
		if r := c.scope.CheckSeed(u); r != "" {
			out[i].Reason = string(r)
			if r == scope.ReasonFilter {
				out[i].Err = c.scope.ExplainFilter(u, false)
			}
			c.stats.reject(string(r))
			continue
		}
		it, why := c.judge(pb, u, 0, 0, prio, "", asLink)
		if why == RejectForwarded {
			// Accepted: its host's owner queues it. Its scope widens here.
			c.scope.AddSeed(u)
			pb.widenScope(u.String)
			continue
		}
		if out[i].Reason = why; why == "" {
			c.scope.AddSeed(u)
			pb.widenScope(u.String)
			pb.items = append(pb.items, it)
		}
	}
	if err := pb.commit(c.seen, c.front); err != nil {
		if !errors.Is(err, ErrStopping) { // the seeds are refused; the crawl ends as it was stopping anyway
			c.fail(fmt.Errorf("crawl: record seeds: %w", err))
		}
		return nil, err
	}
	return out, nil
}

// HostStatus is what the crawl knows of one host now.
type HostStatus struct {
	Host string
	// Known: the frontier, the robots.txt cache or the host cap knows it.
	Known    bool
	Frontier frontier.HostInfo
	// Gap is the least time between two requests to it now:
	// max(--delay, Crawl-delay, backoff).
	Gap time.Duration
	// Robots is the robots.txt answer its https URLs are judged by now,
	// else its http URLs' (each scheme has its own file), nil if there is
	// none (never fetched, expired, or failing and retried).
	Robots *robots.Policy
	// Accepted counts the URLs accepted for it this run (the host cap's
	// count).
	Accepted int64
}

// Host returns what the crawl knows of host (an authority, host[:port],
// as URLs are queued under).
func (c *Crawler) Host(host string) HostStatus {
	if h, err := policy.NormalHost(host); err == nil {
		host = h
	}
	st := HostStatus{Host: host, Robots: c.robots.cachedHost(host, time.Now())}
	if c.frontierUp() {
		st.Frontier = c.front.Host(host)
	}
	st.Accepted, _ = c.hostCap.get(host)
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
func (c *Crawler) HoldHost(host string, on bool) (string, error) {
	h, err := policy.NormalHost(host)
	if err != nil {
		return "", err
	}
	c.front.Hold(h, on)
	return h, nil
}

// frontierUp reports whether the frontier answers questions: its Run has
// started (once it returned, it answers from its last snapshot).
func (c *Crawler) frontierUp() bool {
	c.liveMu.RLock()
	defer c.liveMu.RUnlock()
	return c.frontUp
}

// metaPolicyPrefix + host holds a policy an operator set while the crawl
// ran (SetPolicy), as JSON; a restart puts it over the --policy file's.
const metaPolicyPrefix = "policy/"

// SetPolicy sets host's policy while the crawl runs, replacing any it had,
// and keeps it in the store so that a restart keeps it. A policy may only
// tighten the crawl (a longer delay, fewer URLs): an error says why one
// is refused, and changes nothing.
func (c *Crawler) SetPolicy(host string, p policy.Policy) error {
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
	if err := policy.NewSet(c.policyLimits()).Put(h, p); err != nil {
		return err
	}
	v, err := json.Marshal(p)
	if err != nil {
		return err
	}
	b := c.state.db.NewBatch()
	b.PutMeta(metaPolicyPrefix+h, v)
	if err := b.Commit(true); err != nil {
		return fmt.Errorf("crawl: keep the policy of %s: %w", h, err)
	}
	if err := c.cfg.Policies.Put(h, p); err != nil {
		return err
	}
	c.rearmPolicy(h)
	host = h
	c.log.Info("operator policy set through the API", "host", host, "delay", time.Duration(p.Delay), "disallow", p.Disallow, "max_urls", p.MaxURLs)
	return nil
}

// DeletePolicy removes host's policy, from the store too, and reports
// whether it had one.
func (c *Crawler) DeletePolicy(host string) (bool, error) {
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
	c.rearmPolicy(h)
	b := c.state.db.NewBatch()
	b.DeleteMeta(metaPolicyPrefix + h)
	if err := b.Commit(true); err != nil {
		return had, fmt.Errorf("crawl: forget the policy of %s: %w", host, err)
	}
	return had, nil
}

// rearmPolicy gives the hosts in memory that key's policy applies to (key
// itself, and with no port in key, each port of it) the Crawl-delay their
// policies and robots.txt ask for now, at once: their gap shows it, and
// their next request waits for it (frontier.Rearm).
func (c *Crawler) rearmPolicy(key string) {
	if !c.frontierUp() {
		return // not running yet: the clocks read from the store get it at their next request
	}
	now := time.Now()
	c.front.Rearm(func(host string, _ frontier.Clock) (time.Duration, bool) {
		if host != key && !strings.HasPrefix(host, key+":") {
			return 0, false
		}
		// A Crawl-delay not known now (robots.txt not cached) is learnt
		// again before the next page: that request is robots.txt's.
		var d time.Duration
		if pol := c.robots.cached(host, now); pol != nil {
			d = pol.CrawlDelay
		}
		if p := c.cfg.Policies.ForAuthority(host); p != nil {
			d = max(d, time.Duration(p.Delay))
		}
		return d, true
	})
}

// Policy returns host's own policy, and false if it has none.
func (c *Crawler) Policy(host string) (policy.Policy, bool) {
	h, err := policy.NormalHost(host)
	if err != nil {
		return policy.Policy{}, false
	}
	p, ok := c.cfg.Policies.All()[h]
	return p, ok
}

// policyLimits are the crawl's settings a policy may only tighten.
func (c *Crawler) policyLimits() policy.Limits {
	return policy.Limits{Delay: c.cfg.Delay, MaxURLs: c.cfg.MaxURLsPerHost}
}

// loadPolicies puts the policies operators set in earlier runs over those
// of the configuration.
func (c *Crawler) loadPolicies() error {
	var errs []error
	err := c.state.db.MetaPrefix(metaPolicyPrefix, func(name string, v []byte) bool {
		host := strings.TrimPrefix(name, metaPolicyPrefix)
		var p policy.Policy
		if err := json.Unmarshal(v, &p); err != nil {
			errs = append(errs, fmt.Errorf("crawl: the stored policy of %s: %w", host, err))
			return true
		}
		if err := c.cfg.Policies.Put(host, p); err != nil {
			// The crawl's limits changed since (a longer --delay): the
			// stored policy no longer tightens it, and is dropped.
			c.log.Warn("stored operator policy dropped", "host", host, "err", err)
		}
		return true
	})
	return errors.Join(err, errors.Join(errs...))
}

// Fetch is one line of the fetch log, as the operator API shows it.
type Fetch = fetchRecord

// Recent returns the last fetches (at most 100), newest first.
func (c *Crawler) Recent() []Fetch { return c.flog.last() }

// Hosts returns what the crawl knows of the hosts its frontier holds, those
// with the most URLs in memory first, at most limit.
func (c *Crawler) Hosts(limit int) []HostStatus {
	if !c.frontierUp() {
		return nil
	}
	infos := c.front.Hosts(limit)
	out := make([]HostStatus, 0, len(infos))
	now := time.Now()
	for _, f := range infos {
		st := HostStatus{Host: f.Name, Known: true, Frontier: f, Robots: c.robots.cachedHost(f.Name, now)}
		st.Accepted, _ = c.hostCap.get(f.Name)
		st.Gap = max(c.cfg.Delay, f.Clock.CrawlDelay, f.Clock.Backoff)
		out = append(out, st)
	}
	return out
}

// Page is what the crawl holds of one URL: its record and its captures
// in the capture index, newest first (at most maxPageCaptures).
type Page struct {
	Record   store.URLRecord
	Captures []store.CaptureRecord
}

const maxPageCaptures = 20

// ErrUnknownURL is returned by Page for a URL the crawl has no record of.
var ErrUnknownURL = errors.New("crawl: no such URL")

// Page returns the record and the captures of the URL at pos (as URLs
// lists them).
func (c *Crawler) Page(pos store.URLPos) (Page, error) {
	c.liveMu.RLock()
	defer c.liveMu.RUnlock()
	if c.closed {
		return Page{}, ErrNotRunning
	}
	r, ok, err := c.state.db.GetURL(pos.Part, pos.Host, pos.Hash)
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
	err = c.state.db.Captures(u.SURT(), func(cr store.CaptureRecord) bool {
		if len(p.Captures) == maxPageCaptures { // keep the newest: they come oldest first
			p.Captures = append(p.Captures[:0], p.Captures[1:]...)
		}
		p.Captures = append(p.Captures, cr)
		return true
	})
	slices.Reverse(p.Captures)
	return p, err
}

// DigestString writes a payload digest as WARC does: "sha1:" and base32.
func DigestString(d [20]byte) string { return digestString(d) }
