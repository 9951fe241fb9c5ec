package frontier

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/weft-crawler/weft/internal/partition"
)

// TestOneLeasePerHostUnderRandomOrders drives two frontiers (two nodes of
// a cluster, each with its own queues, sometimes on disk) through random
// orders of what can happen to a host: URLs arriving while it is out,
// completions of every kind (requests or none, retries, parks, Crawl-delays,
// 429s, failures, strain, server groups, draining, clocks computed by the
// worker), operators' holds and policy changes (Rearm), and partitions
// moving from one node to the other. Whatever the order, a host
// is leased at most once at a time across both nodes, and no request to it
// starts sooner after the previous one than its delay, Crawl-delay,
// Retry-After and latency rule allow.
func TestOneLeasePerHostUnderRandomOrders(t *testing.T) {
	const seeds = 300
	var arrivedWhileOut, moved, borrowed int
	for seed := range uint64(seeds) {
		var st scheduleStats
		// A failure in the bubble ends the test; its message names the
		// schedule.
		synctest.Test(t, func(t *testing.T) { st = runRandomSchedule(t, seed) })
		arrivedWhileOut += st.arrivedWhileOut
		moved += st.moved
		borrowed += st.borrowed
	}
	if borrowed < seeds/2 {
		t.Errorf("over %d schedules, only %d borrowed leases given", seeds, borrowed)
	}
	// The orders that matter did happen: a test that never sends a URL to
	// a host with a lease out cannot catch a second lease.
	if arrivedWhileOut < seeds || moved < seeds {
		t.Errorf("over %d schedules, only %d URLs arrived for a host with a lease out and %d partitions moved", seeds, arrivedWhileOut, moved)
	}
}

type scheduleStats struct {
	leases, requests, arrivedWhileOut, moved, borrowed int
}

// node is one frontier of the schedule, with its store if it has one.
type node struct {
	f     *Frontier
	store *diskStore
}

// schedule is the shared truth the workers check the frontiers against.
type schedule struct {
	t       *testing.T
	cfg     Config
	mu      sync.Mutex
	out     map[string]string    // host -> URL of the lease out on it, on either node
	next    map[string]time.Time // host -> earliest start the rules allow for its next request
	lastEnd map[string]time.Time // host -> end of its last request
	policy  map[string]*policyChange
	seed    uint64
	st      scheduleStats
}

func runRandomSchedule(t *testing.T, seed uint64) scheduleStats {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	const parts = 4
	hosts := make([]string, 8)
	for i := range hosts {
		hosts[i] = fmt.Sprintf("h%d.test", i)
	}
	cfg := Config{
		Delay:          []time.Duration{0, 100 * time.Millisecond, time.Second}[rng.IntN(3)],
		MaxActiveHosts: []int{1, 2, 8}[rng.IntN(3)],
		IPGap:          []time.Duration{0, 0, 50 * time.Millisecond}[rng.IntN(3)],
		Partitions:     parts,
		KeepAlive:      true,
		Seed:           seed + 1,
		Politeness:     Politeness{MaxRetryAfter: 2 * time.Second, MaxBackoff: 3 * time.Second, ParkFor: time.Second, GiveUpAfter: 12},
	}
	onDisk := rng.IntN(2) == 0
	if onDisk {
		cfg.FrontBuffer, cfg.HeadSize, cfg.HostCache = 2, 2, 4
	}
	s := &schedule{t: t, cfg: cfg, out: map[string]string{}, next: map[string]time.Time{},
		lastEnd: map[string]time.Time{}, policy: map[string]*policyChange{}, seed: seed}
	nodes := make([]*node, 2)
	for i := range nodes {
		c := cfg
		n := &node{}
		if onDisk {
			n.store = newDiskStore()
			c.Store = n.store
		}
		n.f = newFrontier(t, c)
		nodes[i] = n
	}
	owner := make([]int, parts)
	for p := range owner {
		owner[p] = rng.IntN(2)
		nodes[1-owner[p]].f.HoldPartition(p, true)
	}

	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	for i, n := range nodes {
		wg.Go(func() { n.f.Run(ctx) })
		for w := range 3 {
			wrng := rand.New(rand.NewPCG(seed, uint64(10*i+w+1)))
			wg.Go(func() { s.work(ctx, n, wrng, hosts) })
		}
	}

	urls := 0
	add := func(n *node, host string, k int) {
		its := make([]Item, k)
		for j := range its {
			urls++
			its[j] = Item{URL: fmt.Sprintf("http://%s/%d", host, urls), Host: host, Priority: Priority(rng.IntN(3))}
		}
		s.mu.Lock()
		if s.out[host] != "" {
			s.st.arrivedWhileOut++
		}
		s.mu.Unlock()
		if n.store != nil {
			its = n.store.push(its...)
		}
		n.f.Add(its...)
	}
	for _, h := range hosts {
		add(nodes[owner[partition.Of(h, parts)]], h, 1+rng.IntN(3))
	}
	for range 60 {
		time.Sleep(time.Duration(rng.IntN(400)) * time.Millisecond)
		host := hosts[rng.IntN(len(hosts))]
		if rng.IntN(2) == 0 {
			host = s.busyHost(rng, host) // the order that tempts a second lease
		}
		p := partition.Of(host, parts)
		switch r := rng.IntN(100); {
		case r < 50: // links arrive, mostly at the owner
			n := nodes[owner[p]]
			if rng.IntN(5) == 0 {
				n = nodes[1-owner[p]]
			}
			add(n, host, 1+rng.IntN(3))
		case r < 56: // an operator holds a host, or lets it go
			nodes[rng.IntN(2)].f.Hold(host, rng.IntN(2) == 0)
		case r < 62: // ... or pauses it for a moment, or its partition
			n := nodes[owner[p]]
			if rng.IntN(2) == 0 {
				n.f.Hold(host, true)
				time.Sleep(time.Duration(rng.IntN(100)) * time.Millisecond)
				n.f.Hold(host, false)
			} else {
				n.f.HoldPartition(p, true)
				time.Sleep(time.Duration(rng.IntN(100)) * time.Millisecond)
				n.f.HoldPartition(p, false)
			}
		case r < 67: // its robots.txt hop is done
			nodes[rng.IntN(2)].f.Unpark(host)
		case r < 72: // an operator's policy gives a host a new delay at once,
			// most tellingly one with a lease out and more URLs queued
			host = s.busyHost(rng, host)
			p = partition.Of(host, parts)
			add(nodes[owner[p]], host, 2)
			s.rearm(nodes[owner[p]], host, time.Duration(rng.IntN(4))*time.Second, onDisk)
		case r < 77: // a renderer borrows the host at its owner, mostly
			// one with a lease out
			host = s.busyHost(rng, host)
			n := nodes[owner[partition.Of(host, parts)]]
			brng := rand.New(rand.NewPCG(seed, uint64(1000+urls)))
			urls++
			i := urls
			wg.Go(func() { s.borrow(ctx, n, brng, host, i) })
		case r < 82: // the partition moves to the other node
			from, to := nodes[owner[p]], nodes[1-owner[p]]
			clocks := from.f.ReleasePartition(p)
			to.f.InstallClocks(clocks)
			to.f.HoldPartition(p, false)
			owner[p] = 1 - owner[p]
			s.st.moved++
			s.forgetPolicies(p, parts) // an operator's change was the old node's
		default: // a takeover's clocks, installed over what the node has
			n := nodes[owner[p]]
			n.f.TakeOverPartition(p, time.Now(), n.f.PartitionClocks(p))
		}
	}
	// Let everything that can be leased be leased, then stop.
	for _, n := range nodes {
		for _, h := range hosts {
			n.f.Hold(h, false)
			n.f.Unpark(h)
		}
	}
	time.Sleep(time.Minute)
	cancel()
	wg.Wait()
	return s.st
}

// work is one worker of node n: it takes leases, checks them against the
// rules, "requests" some, and completes each with a random result.
func (s *schedule) work(ctx context.Context, n *node, rng *rand.Rand, hosts []string) {
	for {
		l, err := n.f.Next(ctx)
		if err != nil {
			return
		}
		if l.borrow != nil {
			s.t.Errorf("schedule %d: a worker was given %s, a borrowed URL", s.seed, l.URL)
		}
		s.handle(n, l, rng)
	}
}

// borrow asks node n for a lease on host as a renderer does (Borrow), and
// gives up after a random wait; a lease it gets is held to the same rules
// as a worker's.
func (s *schedule) borrow(ctx context.Context, n *node, rng *rand.Rand, host string, i int) {
	bctx, cancel := context.WithTimeout(ctx, time.Duration(rng.IntN(3000))*time.Millisecond)
	defer cancel()
	l, err := n.f.Borrow(bctx, host, fmt.Sprintf("http://%s/borrowed-%d.js", host, i), Lease{})
	if err != nil {
		return
	}
	s.mu.Lock()
	s.st.borrowed++
	s.mu.Unlock()
	s.handle(n, l, rng)
}

// handle checks lease l against the rules, "requests" it or not, and
// completes it with a random result.
func (s *schedule) handle(n *node, l Lease, rng *rand.Rand) {
	now := time.Now()
	s.mu.Lock()
	if prev := s.out[l.Host]; prev != "" {
		s.t.Errorf("schedule %d: %s leased while %s, on the same host, was out", s.seed, l.URL, prev)
	}
	s.leasedUnderPolicy(l)
	s.out[l.Host] = l.URL
	s.st.leases++
	s.mu.Unlock()

	var r Result
	requested := false
	switch {
	case l.Mode == ModeFindGroup:
		r = Result{Retry: true, SetGroup: true, Group: fmt.Sprintf("10.0.0.%d", len(l.Host)%2)}
	case l.Mode == ModeDrain || l.Mode == ModeGiveUp:
		if l.Mode == ModeDrain && rng.IntN(4) == 0 {
			r = Result{Retry: true, Drain: DrainStop} // it needs a request after all
		}
	case rng.IntN(10) == 0: // dropped without a request (robots.txt disallows it)
		if rng.IntN(3) == 0 {
			r.Drain = DrainStart
		}
	default:
		requested = true
		s.mu.Lock()
		if at := s.next[l.Host]; now.Before(at) {
			s.t.Errorf("schedule %d: %s requested %v before its host's rules allowed", s.seed, l.URL, at.Sub(now))
		}
		s.st.requests++
		s.mu.Unlock()
		took := time.Duration(rng.IntN(300)) * time.Millisecond
		time.Sleep(took)
		r = s.randomResult(rng, took)
	}
	end := time.Now()
	s.mu.Lock()
	if requested {
		s.lastEnd[l.Host] = end
	}
	if pc := s.policy[l.Host]; pc != nil && pc.waiting {
		// The lease out when the policy changed: its delay counts
		// from this lease's end.
		pc.waiting, pc.from = false, s.lastEnd[l.Host]
	}
	if requested {
		// A lower bound on the gap that holds whatever each node
		// remembers of the host: the clock a request's completion
		// arms goes with the host when its partition moves, as long
		// as it has a wait left.
		least := max(s.cfg.Delay, DefaultLatencyFactor*r.Took)
		if r.SetCrawlDelay {
			least = max(least, r.CrawlDelay)
		}
		if r.Signal == Throttled || r.Signal == Unavailable {
			least = max(least, min(r.RetryAfter, s.cfg.MaxRetryAfter))
		}
		s.next[l.Host] = end.Add(least)
	}
	delete(s.out, l.Host)
	s.mu.Unlock()
	if n.store != nil && !r.Retry && l.borrow == nil {
		n.store.done(l.Item)
	}
	if rng.IntN(2) == 0 {
		// The worker computes the clock, from the one its lease came
		// with, as the crawl does to persist it first.
		c := n.f.Advance(l.Clock, r, end)
		r.Clock = &c
	}
	n.f.Complete(l, r)
}

// policyChange is an operator's new delay for a host (Rearm): the host's
// next request waits for it from the end of the last one. A lease taken
// while Rearm was being called may have been given before the change took
// effect (its clock shows the old delay); it is excused, once, and the
// delay then counts from its end.
type policyChange struct {
	d       time.Duration
	from    time.Time // end of the request the delay counts from
	waiting bool      // for the end of the lease out
	excused bool      // a lease was given before the change took effect
}

// rearm gives host a new Crawl-delay d on node n, as an operator's policy
// does. With queues on disk, a host whose clock has run out may be out of
// memory, where Rearm leaves it: only a node with every host in memory is
// held to it.
func (s *schedule) rearm(n *node, host string, d time.Duration, onDisk bool) {
	if !onDisk && n.f.Host(host).Known {
		s.mu.Lock()
		s.policy[host] = &policyChange{d: d, from: s.lastEnd[host], waiting: s.out[host] != ""}
		s.mu.Unlock()
	}
	n.f.Rearm(func(name string, _ Clock) (time.Duration, bool) { return d, name == host })
}

// leasedUnderPolicy checks lease l against a policy change of its host,
// with s.mu held.
func (s *schedule) leasedUnderPolicy(l Lease) {
	pc := s.policy[l.Host]
	switch {
	case pc == nil || pc.waiting:
	case !pc.excused && l.Clock.CrawlDelay != pc.d:
		pc.excused, pc.waiting = true, true
	default:
		delete(s.policy, l.Host)
		s.next[l.Host] = later(s.next[l.Host], pc.from.Add(pc.d))
	}
}

// forgetPolicies drops the policy changes of partition p's hosts.
func (s *schedule) forgetPolicies(p, parts int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for h := range s.policy {
		if partition.Of(h, parts) == p {
			delete(s.policy, h)
		}
	}
}

// busyHost returns a host with a lease out, if there is one, else host.
func (s *schedule) busyHost(rng *rand.Rand, host string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for h := range s.out {
		out = append(out, h)
	}
	if len(out) == 0 {
		return host
	}
	slices.Sort(out)
	return out[rng.IntN(len(out))]
}

func (s *schedule) randomResult(rng *rand.Rand, took time.Duration) Result {
	r := Result{Fetched: true, Took: took}
	switch rng.IntN(12) {
	case 0:
		r.Signal, r.RetryAfter, r.Retry = Throttled, time.Duration(rng.IntN(3))*time.Second, true
	case 1:
		r.Signal, r.Retry = Unavailable, true
	case 2:
		r.Signal = Failed
	case 3:
		r.Signal = Strained
	case 4:
		r.Retry = true // it was robots.txt: the URL waits for its turn again
		r.Park = rng.IntN(2) == 0
	}
	if rng.IntN(4) == 0 {
		r.SetCrawlDelay, r.CrawlDelay = true, time.Duration(rng.IntN(3))*500*time.Millisecond
	}
	if rng.IntN(6) == 0 {
		r.Hold = time.Duration(rng.IntN(2000)) * time.Millisecond
	}
	return r
}
