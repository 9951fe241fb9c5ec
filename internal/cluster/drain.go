package cluster

import (
	"context"
	"encoding/json"
	"time"

	wjs "github.com/weft-crawler/weft/internal/jetstream"
)

// A crawl that ends (weft crawl --cluster, Config.Drain) ends when the
// whole cluster has drained, which no node can see alone: its frontier
// is empty while a link another node found for it is on its way. So each
// node looks at its own part every drainEvery and says what it found in
// its announcement (the lease bucket), and each reads every node's:
//
//   - every partition is leased, by a node that announces it holds it
//     (a lease the node has fenced itself off from stays in the bucket
//     until it expires, and nobody works on it meanwhile);
//   - every node is idle: nothing queued or in flight, every partition it
//     holds taken over and its links read to the end of the log (the
//     stream leader's last message), and none being handed over;
//   - and it stays so: two readings at least drainStable apart in which
//     every node said so from a new look, its activity count (URLs
//     offered to it, links and visits it logged, handoffs) unchanged.
//
// Work comes only as an offer, a logged link or a handoff, each of which
// moves a count, so nothing can have been started and finished unseen
// between the two looks. The first node to find this stops fetching and
// says so (Drained);
// a node that reads that says so too, and each, once every node has (or a
// few looks later), gives its partitions back and ends its crawl as
// drained.
const (
	drainEvery  = 500 * time.Millisecond
	drainStable = 2 * time.Second
)

// drainState is a node's look at its own part of the crawl.
type drainState struct {
	Seq      uint64 `json:"seq"`      // looks so far: a later one is a new look
	Idle     bool   `json:"idle"`     // nothing to do here (above)
	Activity int64  `json:"activity"` // moves with any work that comes
	Held     int    `json:"held"`     // partitions held validly and taken over
	Drained  bool   `json:"drained"`  // this node has found the crawl drained
}

// idle reports whether the node has nothing to do, its activity count,
// read first (work that comes during the look moves it), and how many
// partitions it holds.
func (n *Node) idle(ctx context.Context) (bool, int64, int) {
	activity := n.activity.Load() + int64(n.owners.Handoffs())
	owned := n.owners.Owned()
	if !n.in.Running() {
		return false, activity, len(owned)
	}
	if fs := n.crawl.Live().Frontier; fs.Queued > 0 || fs.InFlight > 0 {
		return false, activity, len(owned)
	}
	type part struct {
		p    int
		next uint64
	}
	var parts []part
	n.mu.Lock()
	ok := len(n.consumers) == len(owned)
	for p, epoch := range owned {
		tk := n.consumers[p]
		if tk == nil || tk.epoch != epoch || !tk.open || tk.snap == nil || !tk.reading.Load() {
			ok = false
			break
		}
		parts = append(parts, part{p, tk.snap.linksNext.Load()})
	}
	n.mu.Unlock()
	if !ok {
		return false, activity, len(owned)
	}
	for _, pt := range parts {
		last, found, err := wjs.LastMsg(ctx, n.js, LinksStream, linksPrefix(pt.p)+".>")
		if err != nil || found && last.Sequence >= pt.next {
			return false, activity, len(owned)
		}
	}
	return true, activity, len(owned)
}

// announce writes the node's announcement now: its API and its look.
func (n *Node) announce(ctx context.Context) {
	n.mu.Lock()
	a := announcement{API: n.api, Drain: n.look}
	n.mu.Unlock()
	b, _ := json.Marshal(a)
	if ctx == nil {
		n.owners.Announce(b)
		return
	}
	actx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	_ = n.owners.AnnounceNow(actx, b)
}

// reading is what every node said in one read of the lease bucket.
type reading struct {
	at     time.Time
	states map[string]drainState
}

// read reads every node's look; ok is false unless every partition is
// leased by a node that announces and every node is idle.
func (n *Node) read(ctx context.Context) (r reading, ok, drained bool) {
	r = reading{at: time.Now(), states: map[string]drainState{}}
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	ms, err := n.owners.Members(rctx)
	if err != nil {
		return r, false, false
	}
	leased := 0
	ok = true
	for _, m := range ms {
		var a announcement
		if json.Unmarshal(m.Announce, &a) != nil || a.Drain == nil {
			ok = false // a node that has not looked yet: one just started, say
			continue
		}
		r.states[m.Node] = *a.Drain
		drained = drained || a.Drain.Drained
		ok = ok && a.Drain.Idle && a.Drain.Held == len(m.Partitions)
		leased += len(m.Partitions)
	}
	return r, ok && leased == n.cfg.Partitions, drained
}

// unchanged reports whether the same nodes said, in after, what they
// said in before, nothing having come to any of them; looked says whether
// each has looked again since.
func unchanged(before, after reading) (same, looked bool) {
	if len(before.states) != len(after.states) {
		return false, false
	}
	looked = true
	for name, b := range before.states {
		a, ok := after.states[name]
		if !ok || a.Activity != b.Activity {
			return false, false
		}
		looked = looked && a.Seq > b.Seq
	}
	return true, looked
}

// drainLoop looks and reads every drainEvery until the crawl has drained
// (then it hands the partitions back and ends the crawl) or ctx is done.
func (n *Node) drainLoop(ctx context.Context) {
	t := time.NewTicker(drainEvery)
	defer t.Stop()
	var since *reading // the first of the readings that all said idle
	decided := 0       // looks since this node found the crawl drained
	for {
		select {
		case <-t.C:
		case <-ctx.Done():
			return
		}
		idle, activity, held := n.idle(ctx)
		n.mu.Lock()
		seq := uint64(1)
		if n.look != nil {
			seq = n.look.Seq + 1
		}
		n.look = &drainState{Seq: seq, Idle: idle || decided > 0, Activity: activity, Held: held, Drained: decided > 0}
		n.mu.Unlock()
		n.announce(ctx)
		r, ok, drained := n.read(ctx)
		if decided > 0 {
			// Every node has said so (or enough looks have passed for
			// each to have read it): the partitions go back, the crawl
			// ends.
			all := true
			for _, st := range r.states {
				all = all && st.Drained
			}
			if decided++; all || decided > 6 {
				n.log.Info("cluster: the whole crawl has drained; this node stops")
				n.mu.Lock()
				n.stopped = true
				n.mu.Unlock()
				sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
				n.owners.Stop(sctx)
				cancel()
				n.in.EndDrained()
				return
			}
			continue
		}
		if drained {
			n.crawl.Pause()
			decided = 1 // another node found it
			continue
		}
		if !ok || !idle {
			since = nil
			continue
		}
		same, looked := false, false
		if since != nil {
			same, looked = unchanged(*since, r)
		}
		switch {
		case !same:
			since = &r
		case looked && r.at.Sub(since.at) >= drainStable:
			n.log.Info("cluster: the whole crawl has drained: every node idle, every partition held, no link unread", "stable_for", r.at.Sub(since.at).Round(time.Millisecond))
			n.crawl.Pause() // found done: nothing more is fetched
			decided = 1
		}
	}
}
