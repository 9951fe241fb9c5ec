package crawl

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/weft-crawler/weft/internal/frontier"
	"github.com/weft-crawler/weft/internal/partition"
	"github.com/weft-crawler/weft/internal/robots"
)

// Robots.txt redirects across the nodes of a cluster. A host's robots.txt
// chain is the host's owner's to follow, but each request of it is made
// under the clock of the host it goes to; when that host is another
// node's (Cluster.Claim refuses it), this node asks that node to make the
// hop (Cluster.RobotsHop, answered there by HopFor), and the rest of the
// chain with it, and parks the host until the decision comes back.

// RobotsAnswer is the outcome of a robots.txt chain followed by another
// node for a host of this one: a decision (the policy's outcome, status,
// why, and for rules the file), or, when the chain came back to the
// host's own server, the URL to go on with there.
type RobotsAnswer struct {
	Outcome   robots.Outcome `json:",omitempty"`
	Status    int            `json:",omitempty"`
	Err       string         `json:",omitempty"`
	FetchedAt time.Time      `json:",omitempty"`
	Body      []byte         `json:",omitempty"`
	Reason    string         `json:",omitempty"` // the hosts-down reason of a failure
	Final     bool           `json:",omitempty"` // no retry can mend it
	Pending   string         `json:",omitempty"` // the chain goes on at this URL, on the host itself
	Hops      int            `json:",omitempty"` // redirects followed so far
	Local     bool           `json:",omitempty"` // made by the asking crawl itself: already applied there
}

// policy rebuilds the decision's policy (the same user agent parses the
// same file the same way on every node).
func (a RobotsAnswer) policy(token string) *robots.Policy {
	switch a.Outcome {
	case robots.Rules:
		return robots.FromStatus(a.Status, a.Body, token, a.FetchedAt)
	case robots.NoRules:
		return robots.NoRulesPolicy(a.Status, a.FetchedAt)
	default:
		return robots.DisallowAllPolicy(a.Status, a.Err, a.FetchedAt)
	}
}

// remoteHopTimeout bounds a hop made by another node: the hop waits for
// its host's clock there, at worst a long backoff.
const remoteHopTimeout = 10 * time.Minute

// remoteHop asks the owner of targetHost to follow the robots.txt chain of
// host (an originKey) from target, off the workers, and applies the
// answer: host's server is parked meanwhile (e.waiting), and unparked once
// it is decided or can go on.
func (r *robotsTxt) remoteHop(host string, e *robotsEntry, target, targetHost string) {
	hops, ctx := e.hops, r.hopCtx
	r.hopWG.Go(func() {
		// The owner may be between two nodes (a handoff): asked again
		// until it answers, for at most remoteHopTimeout.
		rctx, cancel := context.WithTimeout(ctx, remoteHopTimeout)
		var ans RobotsAnswer
		var err error
		for wait := 500 * time.Millisecond; ; wait = min(2*wait, 10*time.Second) {
			if ans, err = r.cluster.RobotsHop(rctx, host, target, targetHost, hops); err == nil {
				break
			}
			select {
			case <-time.After(wait):
				continue
			case <-rctx.Done():
			}
			break
		}
		cancel()
		if ctx.Err() != nil {
			return // the crawl stops: host stays parked in a frontier that is going away
		}
		now := time.Now()
		switch {
		case err != nil:
			r.log.Info("robots.txt hop to another node's host failed", "host", host, "url", target, "err", err)
			r.decide(host, e, robots.DisallowAllPolicy(0, fmt.Sprintf("robots.txt redirects to %s, on a host another node crawls, which did not answer: %v", target, err), now), "redirect-remote", nil, false)
		case ans.Local:
			// This crawl made the hop itself (HopFor, local): the host's
			// robots.txt state is already what the hop left.
		case ans.Pending != "":
			e.pending, e.hops = ans.Pending, ans.Hops
			e.chain.Store(ans.Pending != "")
			e.waiting.Store(false)
		default:
			r.decide(host, e, ans.policy(r.token), ans.Reason, ans.Body, ans.Final)
		}
		r.front.Unpark(originHost(host))
	})
}

// errHopBusy is HopFor's answer while a hop for the same host is under way.
var errHopBusy = errors.New("crawl: a robots.txt hop for this host is already under way")

// HopFor follows, for another node, the robots.txt chain of forHost (the
// scheme://host[:port] of a robots.txt of that node's, see originKey) from
// target, a URL on targetHost (a host of this one), with hops redirects
// followed so far: the request is made under targetHost's lease, as a hop
// of this node's own would be, and so are the hops after it on this node's
// hosts. It returns the decision, or where
// the chain goes on on forHost itself, once known, or ctx's error.
//
// local says that this crawl asked (Cluster.RobotsHop routed the hop back
// to it): forHost's robots.txt state is then its own, set by the asking
// lease, and the hop works on it as a hop made without the cluster does.
func (c *Crawler) HopFor(ctx context.Context, forHost, target, targetHost string, hops int, local bool) (RobotsAnswer, error) {
	c.life.mu.RLock()
	running := c.life.running
	c.life.mu.RUnlock()
	if !running {
		return RobotsAnswer{}, ErrNotRunning
	}
	u, err := c.canon.Parse(target)
	if err != nil || u.Authority != targetHost {
		return RobotsAnswer{}, fmt.Errorf("crawl: robots.txt hop to %q: not a URL of %s", target, targetHost)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w := &hopWaiter{ch: make(chan RobotsAnswer, 1), part: partition.Of(targetHost, c.cfg.Partitions), cancel: cancel}
	if !c.robots.hopsAsked.start(forHost, w) {
		return RobotsAnswer{}, errHopBusy
	}
	defer c.robots.hopsAsked.end(forHost, w)
	e := c.robots.entry(forHost)
	if !local {
		e.pending, e.hops = "", hops
		e.chain.Store(false)
		e.waiting.Store(true)
	}
	c.front.Add(frontier.Item{URL: u.String, Fetch: target, Host: targetHost, Priority: frontier.High, RobotsFor: forHost})
	select {
	case a := <-w.ch:
		a.Local = local
		return a, nil
	case <-ctx.Done():
		if local {
			return RobotsAnswer{}, fmt.Errorf("crawl: robots.txt hop to %s: %w", target, context.Cause(ctx))
		}
		// Not answered: forHost's entry here must not stay waiting, or
		// should this node come to own forHost, its robots.txt would wait
		// for an answer no one sends.
		e.waiting.Store(false)
		return RobotsAnswer{}, fmt.Errorf("crawl: robots.txt hop to %s: %w", target, context.Cause(ctx))
	}
}

// hopsAsked holds the robots.txt hops this node makes for other nodes
// (HopFor), by the host whose robots.txt they are: one at a time per host.
// It is safe for concurrent use.
type hopsAsked struct{ m sync.Map } // host -> *hopWaiter

// hopWaiter is a hop made for another node (HopFor), waiting for its
// answer; part is the partition of the host it is made on.
type hopWaiter struct {
	ch     chan RobotsAnswer
	part   int
	cancel context.CancelFunc
}

// start records w as the hop under way for host, or reports false if one
// is already.
func (h *hopsAsked) start(host string, w *hopWaiter) bool {
	_, busy := h.m.LoadOrStore(host, w)
	return !busy
}

// end forgets w, host's hop, unless another took its place.
func (h *hopsAsked) end(host string, w *hopWaiter) { h.m.CompareAndDelete(host, w) }

// drop ends the hops made for other nodes on partition p's hosts, which
// this node no longer leases (ReleasePartition): each asker hears of it at
// once, and tries again later, of p's next owner.
func (h *hopsAsked) drop(p int) {
	h.m.Range(func(_, v any) bool {
		if w := v.(*hopWaiter); w.part == p {
			w.cancel()
		}
		return true
	})
}

// answer gives the hop made for another node for host its answer, if one
// is waiting.
func (h *hopsAsked) answer(host string, a RobotsAnswer) {
	if w, ok := h.m.LoadAndDelete(host); ok {
		w.(*hopWaiter).ch <- a
	}
}
