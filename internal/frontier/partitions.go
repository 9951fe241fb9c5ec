package frontier

import (
	"container/heap"
	"time"

	"github.com/weft-crawler/weft/internal/partition"
)

// HoldPartition keeps every host of partition p out of the ready heap
// (on), with its queue and its clock, or lets them back (off) unless an
// operator holds them: a cluster node that does not own p, or no longer
// does, leases none of its hosts. Leases out run to their end. It panics
// if Config.Partitions is zero.
func (f *Frontier) HoldPartition(p int, on bool) {
	if f.cfg.Partitions <= 0 {
		panic("frontier: HoldPartition without Config.Partitions")
	}
	f.mu.Lock()
	if f.holdParts == nil {
		f.holdParts = map[int]bool{}
	}
	f.holdParts[p] = on
	f.mu.Unlock()
	f.wake()
}

type clocksReq struct {
	p  int
	ch chan map[string]Clock
}

// PartitionClocks returns the clocks of partition p's hosts that are in
// memory and have been asked (NextAt set), their waits run out or not:
// what a node handing p over passes to the next owner (InstallClocks), so
// that no host is asked sooner than it would have been, even under a
// longer gap an operator gives it after the handoff (Rearm counts that
// from the host's last request, which only a clock that has run out
// still dates). It panics if Config.Partitions is zero.
func (f *Frontier) PartitionClocks(p int) map[string]Clock {
	if f.cfg.Partitions <= 0 {
		panic("frontier: PartitionClocks without Config.Partitions")
	}
	ch := make(chan map[string]Clock, 1)
	select {
	case f.clocksReq <- clocksReq{p: p, ch: ch}:
		return <-ch
	case <-f.done:
		return nil
	}
}

func (f *Frontier) partitionClocks(p int) map[string]Clock {
	out := map[string]Clock{}
	for name, h := range f.hosts {
		if !h.clock.NextAt.IsZero() && partition.Of(name, f.cfg.Partitions) == p {
			out[name] = h.clock
		}
	}
	return out
}

// ReleasePartition holds partition p's hosts (HoldPartition) and returns,
// once no lease on any of them is out (a worker's or an external
// fetcher's, completed or expired), their clocks (as PartitionClocks),
// the completions applied: a node handing p over leaves those for the next
// owner, which can start as soon as this returns. It returns nil if Run
// has ended.
func (f *Frontier) ReleasePartition(p int) map[string]Clock {
	f.HoldPartition(p, true)
	ch := make(chan map[string]Clock, 1)
	select {
	case f.releaseReq <- clocksReq{p: p, ch: ch}:
	case <-f.done:
		return nil
	}
	select {
	case c := <-ch:
		return c
	case <-f.done:
		return nil
	}
}

// answerReleases answers the ReleasePartition calls whose partition has
// no lease out any more.
func (f *Frontier) answerReleases() {
	if len(f.releasing) == 0 {
		return
	}
	busy := map[int]bool{}
	for _, fl := range f.inflight {
		busy[partition.Of(fl.h.name, f.cfg.Partitions)] = true
	}
	kept := f.releasing[:0]
	for _, r := range f.releasing {
		if busy[r.p] {
			kept = append(kept, r)
			continue
		}
		r.ch <- f.partitionClocks(r.p)
	}
	f.releasing = kept
}

// InstallClocks gives each host its given clock, the newer knowledge (a
// previous owner's): its Crawl-delay, backoff and failure counts replace
// what this frontier had, and the next request waits for the later of the
// two NextAt. A host not in memory yet gets it when it comes, over the
// clock it has in the store. A node taking a partition over installs what
// the previous owner passed on before it leases any host.
func (f *Frontier) InstallClocks(clocks map[string]Clock) {
	f.mu.Lock()
	if f.clocksIn == nil {
		f.clocksIn = map[string]Clock{}
	}
	for name, c := range clocks {
		f.clocksIn[name] = installClock(f.clocksIn[name], c)
	}
	f.mu.Unlock()
	f.wake()
}

// rearmFunc is Rearm's argument: a host's new Crawl-delay, or false.
type rearmFunc func(host string, c Clock) (time.Duration, bool)

type rearm struct {
	delay rearmFunc
	done  chan struct{}
}

// Rearm gives the hosts in memory the Crawl-delay delay returns for them
// (false: leave the host as it is) at once, not at the end of their next
// request: an operator's policy changed it. A longer gap pushes the host's
// next request back by as much, so that it still starts the new gap after
// the last one ended (NextAt was armed at least the old gap after that); a
// shorter one lets the wait already armed run out. A host with a lease out
// is re-armed at once and again when the lease comes back, over the clock
// its worker computed, maybe before the change. Hosts not in memory are
// left alone: their last wait has run out, and their next request's
// completion sets the delay. delay runs on Run's goroutine and must not
// call the Frontier. Rearm returns once the clocks are set, so that Host
// shows them, or when Run has returned; call it once Run has started.
func (f *Frontier) Rearm(delay func(host string, c Clock) (time.Duration, bool)) {
	r := rearm{delay: delay, done: make(chan struct{})}
	f.mu.Lock()
	f.rearms = append(f.rearms, r)
	f.mu.Unlock()
	f.wake()
	select {
	case <-r.done:
	case <-f.done:
	}
}

// applyRearms carries out Rearm's orders, after the completions taken
// with them, and again for each host whose lease was out (rearmBusy) once
// it is back.
func (f *Frontier) applyRearms(orders []rearm) {
	for name, delay := range f.rearmBusy {
		if h := f.hosts[name]; h == nil || !h.busy {
			delete(f.rearmBusy, name)
			if h != nil {
				f.rearmHost(h, delay)
			}
		}
	}
	for _, r := range orders {
		for name, h := range f.hosts {
			f.rearmHost(h, r.delay)
			if h.busy {
				if f.rearmBusy == nil {
					f.rearmBusy = map[string]rearmFunc{}
				}
				f.rearmBusy[name] = r.delay
			}
		}
		close(r.done)
	}
}

func (f *Frontier) rearmHost(h *host, delay rearmFunc) {
	d, ok := delay(h.name, h.clock)
	if !ok || d == h.clock.CrawlDelay {
		return
	}
	before := f.cfg.gap(h.clock)
	h.clock.CrawlDelay = d
	if longer := f.cfg.gap(h.clock) - before; longer > 0 && !h.clock.NextAt.IsZero() {
		h.clock.NextAt = h.clock.NextAt.Add(longer)
		f.fix(h)
	}
}

// TakeOver returns clocks as a node taking their hosts over after a crash
// must install them: each host waits at least one gap (the default delay,
// its Crawl-delay or backoff) from at, as after a restart
// (Config.Resumed), since the dead node's last request is not known.
func (f *Frontier) TakeOver(clocks map[string]Clock, at time.Time) map[string]Clock {
	out := make(map[string]Clock, len(clocks))
	for name, c := range clocks {
		c = c.until(at.Add(f.cfg.gap(c)), WhyGap)
		out[name] = c
	}
	return out
}

// TakeOverPartition makes every host of partition p wait at least one gap
// (the default delay, its Crawl-delay or backoff) from at before its next
// request, and installs clocks, those the hosts' last owner kept, over
// that: a node taking p over knows only that the last owner's last
// request to each host ended before at, not when. Hosts in memory are
// held back at once, the others when they come into memory, whether from
// the store, from InstallClocks or new. Call it before the partition is
// let go (HoldPartition false): the order is kept.
func (f *Frontier) TakeOverPartition(p int, at time.Time, clocks map[string]Clock) {
	if f.cfg.Partitions <= 0 {
		panic("frontier: TakeOverPartition without Config.Partitions")
	}
	f.mu.Lock()
	if f.takeovers == nil {
		f.takeovers = map[int]time.Time{}
	}
	f.takeovers[p] = later(f.takeovers[p], at)
	if f.clocksIn == nil && len(clocks) > 0 {
		f.clocksIn = map[string]Clock{}
	}
	for name, c := range f.TakeOver(clocks, at) {
		f.clocksIn[name] = installClock(f.clocksIn[name], c)
	}
	f.mu.Unlock()
	f.wake()
}

// takenOver holds a host of a partition taken over back to a gap from its
// takeover.
func (f *Frontier) takenOver(h *host) {
	if len(f.takenAt) == 0 {
		return
	}
	if at, ok := f.takenAt[partition.Of(h.name, f.cfg.Partitions)]; ok {
		h.clock = h.clock.until(at.Add(f.cfg.gap(h.clock)), WhyGap)
	}
}

// installClock is the clock a host has once given is installed over cur:
// given is the newer knowledge (its last owner's), so its Crawl-delay,
// backoff and failure counts replace cur's, which may be stale (this
// node's memory or store from an earlier ownership; counts that go back
// down after a success must not come back); the next request waits for
// the later of the two.
func installClock(cur, given Clock) Clock {
	return given.until(cur.NextAt, cur.Why)
}

// heldNow says whether host name is held, by an operator or with its
// partition.
func (f *Frontier) heldNow(name string) bool {
	return f.held[name] || len(f.partHeld) > 0 && f.partHeld[partition.Of(name, f.cfg.Partitions)]
}

// setHeld moves a known host in or out of the ready heap as its hold says.
func (f *Frontier) setHeld(h *host) {
	on := f.heldNow(h.name)
	if h.held == on {
		return
	}
	h.held = on
	switch {
	case on && h.heapIdx >= 0:
		heap.Remove(&f.ready, h.heapIdx)
	case !on:
		f.settle(h)
	}
}
