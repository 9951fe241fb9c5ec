package frontier

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/weft-crawler/weft/internal/partition"
)

// Run serves leases until ctx is done or, without KeepAlive, until the
// frontier drains. It returns nil on drain, ctx's error when ctx is done,
// and the Store's error if reading or writing a queue fails. Run may be
// called once.
func (f *Frontier) Run(ctx context.Context) error {
	f.mu.Lock()
	if f.runStarted {
		f.mu.Unlock()
		return errors.New("frontier: run called twice")
	}
	f.runStarted = true
	f.mu.Unlock()
	defer func() {
		f.final = f.stats(time.Now())
		if f.left {
			f.final.Left = f.hostsLeft()
		}
		close(f.done)
	}()
	f.lastUseful = time.Now()

	if f.store != nil {
		// Hosts with a tail were active when the last run stopped: their
		// tails are referenced from nowhere else, so they are taken back
		// first, whatever the bound.
		var hosts []*host
		if err := f.store.TailHosts(func(name string, last uint64) bool {
			h := f.activate(name)
			h.tailMore = true
			h.better = unknownBetter // what the tail holds is not counted: rotate looks
			hosts = append(hosts, h)
			// New tail positions go after every stored one, even if the
			// clock went back since they were written.
			f.tailSeq = max(f.tailSeq, last)
			return f.err == nil
		}); err != nil {
			return fmt.Errorf("frontier: read tails: %w", err)
		}
		f.firstTailSeq = f.tailSeq + 1
		for _, h := range hosts {
			f.settle(h)
		}
		if f.err != nil {
			return f.err
		}
	}

	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	for {
		f.takeInbox()
		f.refill()
		if f.err != nil {
			return f.err
		}
		if f.drained() && !f.bringBack() && !f.cfg.KeepAlive {
			close(f.leases)
			return nil
		}
		now := time.Now()
		f.expire(now)
		if f.waitedOut(now) && !f.bringBack() {
			f.left = true
			close(f.leases)
			return nil
		}
		f.answerReleases()
		lendAt := f.lend(now)
		var (
			out   chan Lease
			offer Lease
			wait  time.Duration = -1
		)
		if !lendAt.IsZero() {
			wait = max(lendAt.Sub(now), 0)
		}
		var offered *host
		if h := f.top(now); h != nil {
			switch w := h.key.Sub(now); {
			case w > 0:
				if wait < 0 || w < wait {
					wait = w
				}
			case h.head.peek().borrow == nil:
				out = f.leases
				offer = f.offer(h, now)
				offered = h
			}
			// A ready host whose next URL is borrowed is lend's alone,
			// and was lent above.
		}
		if len(f.expiry) > 0 {
			if w := max(f.expiry[0].deadline.Sub(now), 0); wait < 0 || w < wait {
				wait = w
			}
		}
		var timeC <-chan time.Time
		if wait >= 0 {
			timer.Reset(wait)
			timeC = timer.C
		}
		select {
		case out <- offer:
			f.taken(offered, offer, now)
			// Other workers may be waiting too: serve them while hosts
			// are ready, without a whole turn of the loop for each.
			for {
				h := f.top(now)
				if h == nil || h.key.After(now) || h.head.peek().borrow != nil {
					break
				}
				more := f.offer(h, now)
				select {
				case f.leases <- more:
					f.taken(h, more, now)
					continue
				default:
				}
				break
			}
		case <-f.kick:
		case <-timeC:
		case ch := <-f.statsReq:
			f.takeInbox() // what was added or completed before the call counts
			ch <- f.stats(now)
		case r := <-f.holdsReq:
			_, ok := f.inflight[r.id]
			r.ch <- ok
		case r := <-f.hostReq:
			r.ch <- f.hostInfo(r.name, now)
		case r := <-f.hostsReq:
			r.ch <- f.hostList(r.limit, now)
		case r := <-f.clocksReq:
			r.ch <- f.partitionClocks(r.p)
		case r := <-f.releaseReq:
			f.takeInbox() // the hold ReleasePartition ordered first
			f.releasing = append(f.releasing, r)
		case <-ctx.Done():
			return ctx.Err()
		}
		if timeC != nil && !timer.Stop() {
			// The timer fired but another case won: drain it so the next
			// Reset starts clean.
			select {
			case <-timer.C:
			default:
			}
		}
	}
}

// offer returns the lease on h's next URL, h being at the top of the ready
// heap and ready.
func (f *Frontier) offer(h *host, now time.Time) Lease {
	it := h.head.peek()
	f.nextLease++
	l := Lease{Item: it, Queued: now.Sub(it.Added), Clock: h.clock, Last: it.back, Answered: h.answers, id: f.nextLease}
	switch {
	case h.clock.GaveUp:
		l.Mode = ModeGiveUp
	case h.drain:
		l.Mode = ModeDrain
	case f.cfg.IPGap > 0 && !h.groupSet:
		l.Mode = ModeFindGroup
	}
	return l
}

// taken records that l, offered for h, was taken: by a worker, or by a
// Borrow call.
func (f *Frontier) taken(h *host, l Lease, now time.Time) {
	heap.Remove(&f.ready, h.heapIdx)
	var g *group
	var groupWas time.Time
	if h.group != nil && l.Requests() {
		g = h.group
		groupWas = g.nextAt
		g.nextAt = now.Add(f.cfg.IPGap)
		g.inflight++
		g.gen++
	}
	it := h.head.pop()
	if it.borrow != nil {
		h.borrowed--
	}
	f.inHeads--
	h.busy = true
	f.count(it, -1)
	fl := &flight{h: h, group: g, item: it, id: l.id, expIdx: -1, groupWas: groupWas}
	if g != nil {
		fl.groupGen = g.gen
	}
	f.inflight[l.id] = fl
	if f.cfg.LeaseTimeout > 0 {
		fl.deadline = now.Add(f.cfg.LeaseTimeout)
		heap.Push(&f.expiry, fl)
	}
}

// countQueued adds n to the URLs queued at its priority: Surplus, or
// the others.
func (f *Frontier) countQueued(it Item, n int) {
	if it.Priority == Surplus {
		f.surplus += n
		return
	}
	f.count(it, n)
}

// count adds n to the URLs queued, for the partition of its host too,
// and to the pages among them (isPage).
func (f *Frontier) count(it Item, n int) {
	f.queued += n
	if f.partQueued != nil {
		f.partQueued[partition.Of(it.Host, f.cfg.Partitions)] += n
	}
	if isPage(it) {
		f.pages += n
	}
}

// isPage says whether it is a page's URL: neither a sitemap, a requisite
// nor a robots.txt hop (Stats.Pages).
func isPage(it Item) bool {
	return !it.Sitemap && !it.Requisite && it.RobotsFor == "" && it.borrow == nil
}

// bringBack puts the URLs put aside (Result.Later) back at the heads of
// their hosts' queues, as many hosts as there are back queues free; it
// reports whether it brought one back. The frontier calls it when nothing
// else is queued or in flight, or nothing but failing hosts' URLs.
func (f *Frontier) bringBack() bool {
	rest := f.aside[:0]
	brought := false
	for _, it := range f.aside {
		if h := f.hosts[it.Host]; (h == nil || !h.activeQ) && f.active >= f.cfg.MaxActiveHosts {
			rest = append(rest, it)
			continue
		}
		h := f.activate(it.Host)
		h.aside--
		it.back = true
		h.head.push(it)
		f.inHeads++
		brought = true
		if !h.busy && !h.parked && !h.held && h.heapIdx < 0 {
			heap.Push(&f.ready, h)
		}
	}
	clear(f.aside[len(rest):])
	f.aside = rest
	return brought
}

// drained reports whether nothing is queued, in memory or on disk, and
// nothing is in flight: nothing but Surplus URLs, which a frontier that
// drains leaves queued, and URLs put aside (Result.Later), which Run
// brings back then. Every other queued URL is in a front queue or in the
// back queue of an active host.
func (f *Frontier) drained() bool {
	if len(f.inflight) > 0 || f.active > 0 {
		return false
	}
	for p := range numPriorities {
		if f.front[p].mem.len() > 0 || f.front[p].onDisk {
			return false
		}
	}
	return true
}

// waitedOut reports whether Run, without KeepAlive, is to return at now
// with URLs left: every one is a failing host's, and none of their
// clocks comes before the wait Config.FailureWait allows after the last
// answer.
func (f *Frontier) waitedOut(now time.Time) bool {
	if f.cfg.KeepAlive || f.cfg.FailureWait <= 0 {
		return false
	}
	w := f.waiting(now)
	return w.Failures && (!now.Before(w.GiveUpAt) || w.At.After(w.GiveUpAt))
}

// waitedFor reports whether a failing host's clock is waited for past the
// failure wait (Config.FailureWait): its last request, the only one that
// failed since its last answered page, was cut by strain or backed off,
// and it answered more pages in this run than it failed requests.
// One failure must not end a host that answers: a body cut at the
// request's time limit holds it LatencyFactor times that (5 minutes at
// the defaults), longer than the failure wait. A second request without an
// answer (a 429 among them) ends it, and so does a failure after a
// Retry-After or a park; a host that never answered a page, such as one
// that hangs or drips every page, is not waited for. The wait lasts until
// its clock, no longer, and is named as the failure wait is (GiveUpAt).
func (h *host) waitedFor() bool {
	return h.unanswered == 1 && h.clock.Why == WhyBackoff && h.answers > h.failed
}

// waiting says what the frontier waits for at now (Stats.Wait).
func (f *Frontier) waiting(now time.Time) Wait {
	var w Wait
	for name := range f.held {
		if h := f.hosts[name]; h != nil && (h.head.len() > 0 || h.tailMore) {
			w.Held++
		}
	}
	w.Parked = f.parked
	h := f.top(now)
	if h == nil || !h.key.After(now) {
		return w // nothing queued, or a host is ready
	}
	w.Host, w.At, w.Why, w.Cause = h.name, h.key, h.clock.Why, h.clock.Cause
	if h.key.After(h.clock.NextAt) {
		// Its own clock allows it; its server's does not: the gap
		// between requests to one server (Config.IPGap), or the backoff
		// after a request to it cut by strain.
		w.Why = WhyGap
		if g := h.group; g != nil && !h.key.After(g.strained) {
			w.Why = WhyBackoff
		}
	}
	if len(f.inflight) > 0 || w.Held > 0 {
		return w
	}
	var waitFor time.Time
	for _, h := range f.ready {
		if !h.clock.Failing() {
			return w
		}
		if h.waitedFor() {
			waitFor = later(waitFor, h.key)
		}
	}
	w.Failures = true
	if !f.cfg.KeepAlive && f.cfg.FailureWait > 0 {
		w.GiveUpAt = later(f.lastUseful.Add(f.cfg.FailureWait), waitFor)
	}
	return w
}

// hostsLeft is every host in memory with URLs queued: what a Run that
// waited out its failing hosts left for a later one.
func (f *Frontier) hostsLeft() []HostInfo {
	var out []HostInfo
	for name, h := range f.hosts {
		if h.head.len() > 0 || h.tailMore || h.busy || h.aside > 0 {
			out = append(out, f.hostInfo(name, time.Time{}))
		}
	}
	slices.SortFunc(out, func(a, b HostInfo) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// fail records the first store error; Run returns it.
func (f *Frontier) fail(err error) {
	if f.err == nil {
		f.err = fmt.Errorf("frontier: %w", err)
	}
}

// takeInbox applies pending adds, then completions. Adds first: a worker
// adds a page's links before completing its lease, so the frontier never
// sees the lease back while the links are still on their way, and never
// declares itself drained too early.
func (f *Frontier) takeInbox() {
	f.mu.Lock()
	adds, completes, unparks, holds, parts, clocks := f.adds, f.completes, f.unparks, f.holdHosts, f.holdParts, f.clocksIn
	f.adds, f.completes, f.unparks, f.holdHosts, f.holdParts, f.clocksIn = nil, nil, nil, nil, nil, nil
	borrows := f.borrows
	f.borrows = nil
	rearms, takeovers := f.rearms, f.takeovers
	f.rearms, f.takeovers = nil, nil
	f.mu.Unlock()
	// Takeovers first: a partition let go in the same round waits for
	// its takeover's gaps.
	for p, at := range takeovers {
		f.takenAt[p] = later(f.takenAt[p], at)
	}
	if len(takeovers) > 0 {
		for _, h := range f.hosts {
			if _, ok := takeovers[partition.Of(h.name, f.cfg.Partitions)]; ok {
				f.takenOver(h)
				f.fix(h)
			}
		}
	}
	for name, c := range clocks {
		if h := f.hosts[name]; h != nil {
			h.clock = installClock(h.clock, c)
			f.fix(h)
		} else {
			f.installed[name] = installClock(f.installed[name], c)
		}
	}
	for name, on := range holds {
		if on {
			f.held[name] = true
		} else {
			delete(f.held, name)
		}
		if h := f.hosts[name]; h != nil {
			f.setHeld(h)
		}
	}
	if len(parts) > 0 {
		for p, on := range parts {
			if on {
				f.partHeld[p] = true
			} else {
				delete(f.partHeld, p)
			}
		}
		for _, h := range f.hosts {
			if _, changed := parts[partition.Of(h.name, f.cfg.Partitions)]; changed {
				f.setHeld(h)
			}
		}
	}
	now := time.Now()
	for _, it := range adds {
		f.add(it, now)
	}
	f.takeBorrows(borrows)
	for _, c := range completes {
		f.complete(c, now)
	}
	f.applyRearms(rearms)
	for _, name := range unparks {
		h := f.hosts[name]
		switch {
		case h == nil:
		case h.parked:
			h.parked = false
			f.parked--
			f.settle(h)
		case h.busy:
			// The hop it waits for was done before its own lease came
			// back: the Complete(Park) still on its way must not park it.
			h.unparked = true
		}
	}
	f.prune(now)
}

// add takes an item given to Add into its front queue's memory, unless it
// is on disk and does not fit, or was read from the disk already.
func (f *Frontier) add(it Item, now time.Time) {
	if it.Priority != Surplus {
		it.Priority = min(max(it.Priority, Low), High)
	}
	it.Tail = false
	if it.Added.IsZero() {
		it.Added = now
	}
	f.countQueued(it, 1)
	fq := &f.front[it.Priority]
	switch {
	case f.store == nil || it.Seq == 0:
		fq.mem.push(it) // lives in memory only
	case it.Seq <= fq.after:
		// Read from the disk while its Add was on the way.
	case !fq.onDisk && fq.mem.len() < f.cfg.FrontBuffer:
		fq.mem.push(it)
		fq.after = it.Seq
	default:
		fq.onDisk = true // read back in order when memory runs low
	}
}

func (f *Frontier) complete(c completion, now time.Time) {
	fl, ok := f.inflight[c.lease.id]
	if !ok {
		return // unknown, expired or already completed
	}
	delete(f.inflight, c.lease.id)
	if fl.expIdx >= 0 {
		heap.Remove(&f.expiry, fl.expIdx)
	}
	h := fl.h
	h.busy = false
	if g := fl.group; g != nil {
		// A server of the group is asked again IPGap after its last
		// request ended, as well as after the last one started. A lease
		// that sent it nothing (a copy found stale, a URL robots.txt or a
		// budget drops, an address refused) gives back the gap its start
		// took, unless another lease of the group took one since: the
		// server saw nothing, and a host with many such URLs would
		// otherwise drop one an IPGap.
		g.inflight--
		switch {
		case c.result.Fetched:
			g.nextAt = later(g.nextAt, now.Add(f.cfg.IPGap))
			g.gen++
		case g.gen == fl.groupGen:
			g.nextAt = fl.groupWas
		}
	}
	if c.result.Fetched && c.result.Signal == OK {
		f.lastUseful = now
	}
	if c.result.Fetched {
		switch {
		case c.result.Signal == Lost:
		case c.result.Signal != OK: // a page's, a sitemap's, a requisite's, a robots.txt's
			h.unanswered++
			if c.result.Signal != Throttled { // a failure, as Clock.Errors counts them
				h.failed++
			}
		case isPage(fl.item) && !c.result.Retry: // not a robots.txt fetched in a page's lease
			h.answers, h.unanswered = h.answers+1, 0
		}
	}
	if c.result.Clock != nil {
		h.clock = *c.result.Clock
	} else {
		h.clock = f.cfg.advance(h.clock, c.result, now)
	}
	if g := fl.group; g != nil && c.result.Fetched {
		switch c.result.Signal {
		case OK:
			g.strains = 0
		case Strained:
			// The server behind the group may still be working on the
			// request it could not finish: none of its hosts is asked
			// before that hold has passed.
			g.strains++
			hold := f.strainHold(g.strains, c.result.Took)
			g.nextAt = later(g.nextAt, now.Add(hold))
			g.strained = later(g.strained, now.Add(hold))
		}
	}
	if c.result.SetGroup {
		f.setGroup(h, c.result.Group)
		h.groupSet = true
	}
	switch c.result.Drain {
	case DrainStart:
		h.drain = true
	case DrainStop:
		h.drain = false
	}
	switch {
	case !c.result.Retry || fl.item.borrow != nil: // a borrowed URL is its caller's to ask again
	case c.result.Later && !fl.item.back && len(f.aside) < f.cfg.FrontBuffer:
		f.aside = append(f.aside, fl.item)
		h.aside++
		f.count(fl.item, 1)
	default:
		// Past the bound of URLs kept aside, one is leased again now,
		// as one brought back is.
		if c.result.Later {
			fl.item.back = true
		}
		h.head.pushFront(fl.item)
		f.inHeads++
		f.count(fl.item, 1)
	}
	if c.result.Park && !h.unparked {
		h.parked = true
		f.parked++
	}
	h.unparked = false
	f.settle(h)
}

// strainHold is how long a server group waits after a request to one of
// its hosts was cut by strain, the strains-th since one of them answered,
// after took: as long as the latency rule says the server may still be
// working on the request, doubled with each strain in a row up to
// MaxBackoff, as a host's own backoff is. One host that hangs on a server
// whose other hosts answer (a site of many on a shared server, a
// robots.txt that hangs) holds them for the first term only, while its own
// backoff doubles; a server that strains whatever is asked of it is held
// longer with each strain, whichever host it was asked for.
func (f *Frontier) strainHold(strains int, took time.Duration) time.Duration {
	p := &f.cfg.Politeness
	hold := max(p.latencyWait(took), p.MinBackoff)
	for range min(strains-1, 20) {
		hold = max(min(2*hold, p.MaxBackoff), hold)
	}
	return hold
}

// expire gives back the leases whose time is up, as if their workers had
// fetched and asked for a retry: the host's clock is armed, in case the
// request did go out, and the URL is leased again after the gap.
func (f *Frontier) expire(now time.Time) {
	for len(f.expiry) > 0 && !f.expiry[0].deadline.After(now) {
		f.expired++
		f.complete(completion{lease: Lease{id: f.expiry[0].id}, result: Result{Fetched: true, Retry: true, Signal: Lost}}, now)
	}
}

// settle puts an idle host where it belongs: in the ready heap when it has
// URLs and is not parked; out of the back queues when it has none, on disk
// or in memory.
func (f *Frontier) settle(h *host) {
	if h.busy || h.heapIdx >= 0 {
		return
	}
	if h.head.len() == 0 && h.tailMore {
		f.readTail(h)
	}
	f.rotate(h)
	switch {
	case h.head.len() == 0 && !h.parked:
		// Out of the back queues. A draining host goes on draining: URLs
		// that come later (links found before its robots.txt was known
		// to forbid everything) are dropped at once, not left waiting on
		// its clock, which a 503 may have put an hour away.
		if h.activeQ {
			h.activeQ = false
			f.active--
		}
	case h.parked || h.held:
		// Holds its back queue (and slot) until unparked, or released.
	default:
		heap.Push(&f.ready, h)
	}
}

// prune forgets idle hosts whose clock has run out, in the map's random
// order, until the map is down to half the cache, once it has reached the
// cache's size (with a Store only: their clocks are on disk). If the hosts
// it must keep fill the cache, the next prune waits until the map has
// doubled, so pruning stays linear in the hosts added.
func (f *Frontier) prune(now time.Time) {
	if f.store == nil {
		return
	}
	keep := max(f.cfg.HostCache/2, 2*f.cfg.MaxActiveHosts)
	if len(f.installed) >= f.installPruneAt {
		// Clocks installed for hosts not in memory yet (InstallClocks)
		// are bounded alike: one whose wait has run out only dates its
		// host's last request, for a longer gap given later (Rearm).
		for name, c := range f.installed {
			if len(f.installed) <= keep {
				break
			}
			if !c.NextAt.After(now) {
				delete(f.installed, name)
			}
		}
		f.installPruneAt = max(f.cfg.HostCache, 2*len(f.installed))
	}
	if len(f.hosts) < f.pruneAt {
		return
	}
	for name, h := range f.hosts {
		if len(f.hosts) <= keep {
			break
		}
		if !h.activeQ && !h.busy && !h.parked && !h.held && h.aside == 0 && h.head.len() == 0 && !h.clock.NextAt.After(now) {
			f.setGroup(h, "")
			delete(f.hosts, name)
		}
	}
	f.pruneAt = max(f.cfg.HostCache, 2*len(f.hosts))
	for name, g := range f.groups {
		if g.hosts == 0 && !g.nextAt.After(now) {
			delete(f.groups, name)
		}
	}
}

func (f *Frontier) stats(now time.Time) Stats {
	s := Stats{
		Queued:       f.queued,
		Earlier:      f.earlier,
		EarlierAgain: f.earlierAgain,
		InFlight:     len(f.inflight),
		Expired:      f.expired,
		ActiveHosts:  f.active,
		ParkedHosts:  f.parked,
		HeldHosts:    len(f.held),
		KnownHosts:   len(f.hosts),
	}
	for p := range f.partHeld { // only held ones are in the map
		if p >= 0 && p < len(f.partQueued) {
			s.Queued -= f.partQueued[p]
			s.PartitionHeld += f.partQueued[p]
		}
	}
	for p := range f.front {
		s.Front += f.front[p].mem.len()
	}
	s.Surplus = f.surplus
	s.Pages, s.Aside = f.pages, len(f.aside)
	s.InMemory = s.Front + f.inHeads
	s.Groups = len(f.groups)
	s.Wait = f.waiting(now)
	for _, h := range f.ready {
		if !h.readyAt().After(now) {
			s.ReadyHosts++
		} else {
			s.WaitingHost++
		}
	}
	return s
}
