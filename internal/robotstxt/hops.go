package robotstxt

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/weft-crawler/weft/internal/canon"
	"github.com/weft-crawler/weft/internal/frontier"
	"github.com/weft-crawler/weft/internal/partition"
	"github.com/weft-crawler/weft/internal/robots"
)

// Robots.txt redirects to other hosts. A host's robots.txt chain is the
// host's owner's to follow, but each request of it is made under the clock
// of the host it goes to, and the host whose chain it is waits parked
// until that request has decided its file or sent the chain back to it.
// On one node the hop is queued on the node's own frontier (hopHere); in a
// cluster the hop's host's owner makes it (byOwner: Cluster.RobotsHop,
// answered there by HopFor), and the rest of the chain with it.

// hopper makes the request of host's robots.txt chain (host an Origin, e
// its entry, parked) to target, a URL of next's host. New chooses a Files'
// hopper once: nothing else asks whether the crawl runs on one node.
type hopper interface {
	hop(r *Files, host string, e *entry, target string, next canon.URL)
	// wait returns once the hops made off the workers have ended: after
	// Begin's context is done, at once.
	wait()
}

// hopHere is the hopper of a crawl on one node: the hop is queued on its
// frontier, under the clock of the hop's host, whose lease makes it
// (Files.Hop) and unparks host.
type hopHere struct{}

func (hopHere) hop(r *Files, host string, _ *entry, target string, next canon.URL) {
	r.front.Add(frontier.Item{URL: next.String, Fetch: target, Host: next.Authority, Priority: frontier.High, RobotsFor: host})
}

func (hopHere) wait() {}

// byOwner is the hopper of a crawl on several nodes: the owner of the
// hop's host makes the hop, even when it is this node, since ownership may
// move before the hop's turn comes, and the owner's answer comes back
// either way.
type byOwner struct {
	cluster Cluster
	wg      sync.WaitGroup // the hops asked and not yet answered
}

// Answer is the outcome of a robots.txt chain followed by another node
// for a host of this one: a decision (the policy's outcome, status, why,
// and for rules the file), or, when the chain came back to the host's own
// server, the URL to go on with there.
type Answer struct {
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
func (a Answer) policy(token string) *robots.Policy {
	switch a.Outcome {
	case robots.Rules:
		return robots.FromStatus(a.Status, a.Body, token, a.FetchedAt)
	case robots.NoRules:
		return robots.NoRulesPolicy(a.Status, a.FetchedAt)
	default:
		return robots.DisallowAllPolicy(a.Status, a.Err, a.FetchedAt)
	}
}

// Begin gives the hops asked of other nodes the context they wait under:
// the crawl's, which ends as it closes. Call it before the first lease;
// Wait once ctx is done.
func (r *Files) Begin(ctx context.Context) { r.hopCtx = ctx }

// Wait returns once the hops asked of other nodes have ended: after
// Begin's context is done, at once.
func (r *Files) Wait() { r.hops.wait() }

// remoteHopTimeout bounds a hop made by another node: the hop waits for
// its host's clock there, at worst a long backoff.
const remoteHopTimeout = 10 * time.Minute

// hop asks the owner of next's host to follow the robots.txt chain of
// host from target, off the workers, and applies the answer: host's
// server is parked meanwhile (e.waiting), and unparked once it is decided
// or can go on.
func (o *byOwner) hop(r *Files, host string, e *entry, target string, next canon.URL) {
	hops, ctx, targetHost := e.hops, r.hopCtx, next.Authority
	o.wg.Go(func() {
		// The owner may be between two nodes (a handoff): asked again
		// until it answers, for at most remoteHopTimeout.
		rctx, cancel := context.WithTimeout(ctx, remoteHopTimeout)
		var ans Answer
		var err error
		for wait := 500 * time.Millisecond; ; wait = min(2*wait, 10*time.Second) {
			if ans, err = o.cluster.RobotsHop(rctx, host, target, targetHost, hops); err == nil {
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
		r.front.Unpark(Authority(host))
	})
}

func (o *byOwner) wait() { o.wg.Wait() }

// errHopBusy is HopFor's answer while a hop for the same host is under way.
var errHopBusy = errors.New("robotstxt: a robots.txt hop for this host is already under way")

// HopFor follows, for another node, the robots.txt chain of forHost (the
// Origin of a robots.txt of that node's) from target, a URL on targetHost
// (a host of this one), with hops redirects followed so far: the request
// is made under targetHost's lease, as a hop of this node's own would be,
// and so are the hops after it on this node's hosts. It returns the
// decision, or where the chain goes on on forHost itself, once known, or
// ctx's error.
//
// local says that this crawl asked (Cluster.RobotsHop routed the hop back
// to it): forHost's robots.txt state is then its own, set by the asking
// lease, and the hop works on it as a hop made without the cluster does.
func (r *Files) HopFor(ctx context.Context, forHost, target, targetHost string, hops int, local bool) (Answer, error) {
	u, err := r.canon.Parse(target)
	if err != nil || u.Authority != targetHost {
		return Answer{}, fmt.Errorf("robotstxt: robots.txt hop to %q: not a URL of %s", target, targetHost)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w := &hopWaiter{ch: make(chan Answer, 1), part: partition.Of(targetHost, r.parts), cancel: cancel}
	if !r.hopsAsked.start(forHost, w) {
		return Answer{}, errHopBusy
	}
	defer r.hopsAsked.end(forHost, w)
	e := r.entry(forHost)
	if !local {
		e.pending, e.hops = "", hops
		e.chain.Store(false)
		e.waiting.Store(true)
	}
	r.front.Add(frontier.Item{URL: u.String, Fetch: target, Host: targetHost, Priority: frontier.High, RobotsFor: forHost})
	select {
	case a := <-w.ch:
		a.Local = local
		return a, nil
	case <-ctx.Done():
		if !local {
			// Not answered: forHost's entry here must not stay waiting,
			// or should this node come to own forHost, its robots.txt
			// would wait for an answer no one sends.
			e.waiting.Store(false)
		}
		return Answer{}, fmt.Errorf("robotstxt: robots.txt hop to %s: %w", target, context.Cause(ctx))
	}
}

// DropHops ends the hops made for other nodes on partition p's hosts,
// which this node no longer leases: each asker hears of it at once, and
// tries again later, of p's next owner.
func (r *Files) DropHops(p int) { r.hopsAsked.drop(p) }

// hopsAsked holds the robots.txt hops this node makes for other nodes
// (HopFor), by the host whose robots.txt they are: one at a time per host.
// It is safe for concurrent use.
type hopsAsked struct{ m sync.Map } // host -> *hopWaiter

// hopWaiter is a hop made for another node (HopFor), waiting for its
// answer; part is the partition of the host it is made on.
type hopWaiter struct {
	ch     chan Answer
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

// drop cancels the hops made on partition p's hosts.
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
func (h *hopsAsked) answer(host string, a Answer) {
	if w, ok := h.m.LoadAndDelete(host); ok {
		w.(*hopWaiter).ch <- a
	}
}
