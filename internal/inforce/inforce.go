// Package inforce keeps the operators' per-host policies in force while a
// crawl runs: set and deleted through the operator API, kept in the store
// so that a restart keeps them over the configuration's, and applied to
// the hosts' clocks, at each lease and at once when a policy changes. The
// policies themselves, and why one may only tighten a crawl, are package
// policy's.
package inforce

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/weft-crawler/weft/internal/frontier"
	"github.com/weft-crawler/weft/internal/lifecycle"
	"github.com/weft-crawler/weft/internal/policy"
	"github.com/weft-crawler/weft/internal/robotstxt"
	"github.com/weft-crawler/weft/internal/store"
)

// Policies are the operators' policies in force, which an operator may
// change while the crawl runs (safe for concurrent use), kept in the store
// across restarts, and applied to the hosts' clocks: a policy's delay is folded into the Crawl-delay a
// clock keeps, at each lease and at once when the policy changes.
type Policies struct {
	set    *policy.Set
	limits policy.Limits // what a policy may not loosen, the crawl's own
	db     *store.DB
	robots *robotstxt.Cache // a Crawl-delay robots.txt asks for is kept too
	front  *frontier.Frontier
	life   *lifecycle.State
	log    *slog.Logger
	// refused holds the hosts whose policy delay was refused, said once
	// in the log.
	refused sync.Map
}

// Config is what Policies keep in force and where.
type Config struct {
	Set    *policy.Set        // the policies in force, read on every URL
	Limits policy.Limits      // what a policy may not loosen: the crawl's own
	DB     *store.DB          // where the policies set through Policies are kept
	Robots *robotstxt.Cache   // the Crawl-delays robots.txt files ask for, which a policy's delay never shortens
	Front  *frontier.Frontier // whose clocks a change re-arms
	// Life is the crawl's phase: nothing changes once it has closed its
	// store, and clocks are re-armed only while its frontier runs.
	Life *lifecycle.State
	Log  *slog.Logger
}

// New returns the policies cfg holds, in force.
func New(cfg Config) *Policies {
	return &Policies{set: cfg.Set, limits: cfg.Limits, db: cfg.DB, robots: cfg.Robots, front: cfg.Front, life: cfg.Life, log: cfg.Log}
}

// metaPolicyPrefix + host holds a policy an operator set while the crawl
// ran (Policies.Set), as JSON; a restart puts it over the --policy file's.
const metaPolicyPrefix = "policy/"

// Delay folds the delay of the host's policy into the Crawl-delay its
// clock keeps, so that its gap, max(--delay, Crawl-delay, backoff), is at
// least the policy's. A robots.txt Crawl-delay longer than the policy's
// delay wins: the policy asked for weft to be faster than robots.txt, which
// is refused, and said once in the log.
func (p *Policies) Delay(l frontier.Lease, res frontier.Result) frontier.Result {
	hp := p.set.ForAuthority(l.Host)
	if hp == nil || hp.Delay <= 0 {
		return res
	}
	d := time.Duration(hp.Delay)
	robotsDelay := l.Clock.CrawlDelay
	if res.SetCrawlDelay {
		robotsDelay = res.CrawlDelay
		if robotsDelay > d {
			if _, told := p.refused.LoadOrStore(l.Host, true); !told {
				p.log.Warn("policy refused: its delay is shorter than the host's robots.txt Crawl-delay, which weft keeps",
					"host", l.Host, "policy_delay", d, "crawl_delay", robotsDelay)
			}
		}
	}
	res.SetCrawlDelay, res.CrawlDelay = true, max(robotsDelay, d)
	return res
}

// rearm gives the hosts in memory that key's policy applies to (key
// itself, and with no port in key, each port of it) the Crawl-delay their
// policies and robots.txt ask for now, at once: their gap shows it, and
// their next request waits for it (frontier.Rearm). Only once the frontier
// runs (lifecycle.Phase.FrontierUp): before, the clocks read from the store get
// it at their next request.
func (p *Policies) rearm(key string) {
	now := time.Now()
	p.front.Rearm(func(host string, _ frontier.Clock) (time.Duration, bool) {
		if host != key && !strings.HasPrefix(host, key+":") {
			return 0, false
		}
		// A Crawl-delay not known now (robots.txt not cached) is learnt
		// again before the next page: that request is robots.txt's.
		var d time.Duration
		for _, scheme := range robotstxt.Schemes { // one clock serves the authority's schemes
			if pol := p.robots.Cached(robotstxt.Origin(scheme, host), now); pol != nil {
				d = max(d, pol.CrawlDelay)
			}
		}
		if hp := p.set.ForAuthority(host); hp != nil {
			d = max(d, time.Duration(hp.Delay))
		}
		return d, true
	})
}

// Set sets host's policy while the crawl runs, replacing any it had, and
// keeps it in the store so that a restart keeps it. A policy may only
// tighten the crawl (a longer delay, fewer URLs; a boost only reorders
// the host's URLs queued from now): an error says why, and changes nothing.
func (p *Policies) Set(host string, pol policy.Policy) error {
	ph := p.life.Hold()
	defer p.life.Release()
	if ph.Closed {
		return lifecycle.ErrNotRunning
	}
	h, err := policy.NormalHost(host)
	if err != nil {
		return err
	}
	if len(pol.Headers) > 0 {
		// Kept in the store, they would be secrets on disk.
		return errors.New("headers are given in the policy file or the profile, not here: they are secrets, which the crawl's state does not keep")
	}
	// Checked first, kept next, applied last: a policy refused, or not
	// kept, is not in force either.
	if err := policy.NewSet(p.limits).Put(h, pol); err != nil {
		return err
	}
	v, err := json.Marshal(pol)
	if err != nil {
		return err
	}
	b := p.db.NewBatch()
	b.PutMeta(metaPolicyPrefix+h, v)
	if err := b.Commit(true); err != nil {
		return fmt.Errorf("inforce: keep the policy of %s: %w", h, err)
	}
	if err := p.set.Put(h, pol); err != nil {
		return err
	}
	if ph.FrontierUp { // else the clocks read from the store get it at their next request
		p.rearm(h)
	}
	p.log.Info("operator policy set through the API", "host", h, "delay", time.Duration(pol.Delay), "disallow", pol.Disallow, "max_urls", pol.MaxURLs, "boost", pol.Boost, "boosts", pol.Boosts)
	return nil
}

// Delete removes host's policy, from the store too, and reports whether
// it had one.
func (p *Policies) Delete(host string) (bool, error) {
	ph := p.life.Hold()
	defer p.life.Release()
	if ph.Closed {
		return false, lifecycle.ErrNotRunning
	}
	h, err := policy.NormalHost(host)
	if err != nil {
		return false, err
	}
	had := p.set.Delete(h)
	if ph.FrontierUp { // else the clocks read from the store get it at their next request
		p.rearm(h)
	}
	b := p.db.NewBatch()
	b.DeleteMeta(metaPolicyPrefix + h)
	if err := b.Commit(true); err != nil {
		return had, fmt.Errorf("inforce: forget the policy of %s: %w", host, err)
	}
	return had, nil
}

// Policy returns host's own policy, and false if it has none.
func (p *Policies) Policy(host string) (policy.Policy, bool) {
	h, err := policy.NormalHost(host)
	if err != nil {
		return policy.Policy{}, false
	}
	pol, ok := p.set.All()[h]
	return pol, ok
}

// Load puts the policies operators set in earlier runs, kept in db,
// over those of the configuration, in set.
func Load(db *store.DB, set *policy.Set, log *slog.Logger) error {
	var errs []error
	err := db.MetaPrefix(metaPolicyPrefix, func(name string, v []byte) bool {
		host := strings.TrimPrefix(name, metaPolicyPrefix)
		var p policy.Policy
		if err := json.Unmarshal(v, &p); err != nil {
			errs = append(errs, fmt.Errorf("inforce: the stored policy of %s: %w", host, err))
			return true
		}
		if err := set.Put(host, p); err != nil {
			// The crawl's limits changed since (a longer --delay): the
			// stored policy no longer tightens it, and is dropped.
			log.Warn("stored operator policy dropped", "host", host, "err", err)
		}
		return true
	})
	return errors.Join(err, errors.Join(errs...))
}
