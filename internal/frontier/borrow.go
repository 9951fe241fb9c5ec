package frontier

import (
	"container/heap"
	"context"
	"sync"
	"time"
)

// borrow is a Borrow call waiting for its host's clock.
type borrow struct {
	mu    sync.Mutex
	ch    chan Lease // buffered: the dispatcher never blocks on it
	gone  bool       // the caller stopped waiting
	under uint64     // the id of the lease its caller holds, if any
}

// Borrow waits for host's clock exactly as a queued URL does (one lease in
// flight per host, its delay, backoff and server group) and returns a
// lease on url for the caller alone, not for Next's workers: a request
// that is not the crawl's own, such as a browser's subresource while it
// renders a page. The URL goes first in its host's queue, in memory only
// (nothing of it is stored), and is not counted as discovered. It is given
// as soon as its host is ready, whatever other hosts wait to be leased.
// The lease is completed with Complete like any other; a Retry puts it
// back for the same caller only if it calls Borrow again, so complete it
// without Retry. Borrow returns ctx's error, or ErrStopped once Run has
// returned; a lease given as ctx ends is completed without a request.
//
// under is the lease the caller holds while it borrows (the zero Lease if
// none). A lease held on the same host would make Borrow wait for it: a
// caller that holds one makes its own requests to that host under it. A
// lease held on another host of the same server group does not: the
// borrowed lease comes with SameServer set, and the caller keeps its own
// requests under the held lease from overlapping it.
func (f *Frontier) Borrow(ctx context.Context, host, url string, under Lease) (Lease, error) {
	b := &borrow{ch: make(chan Lease, 1), under: under.id}
	f.mu.Lock()
	f.borrows = append(f.borrows, Item{URL: url, Host: host, Priority: High, borrow: b})
	f.mu.Unlock()
	f.wake()
	select {
	case l := <-b.ch:
		return l, nil
	case <-ctx.Done():
		b.mu.Lock()
		b.gone = true
		select {
		case l := <-b.ch: // given as ctx ended: back, with no request
			f.Complete(l, Result{})
		default:
		}
		b.mu.Unlock()
		f.wake() // its URL is dropped from its host's queue
		return Lease{}, ctx.Err()
	case <-f.done:
		return Lease{}, ErrStopped
	}
}

// takeBorrows puts borrowed URLs first in their hosts' queues. A host
// needs no back-queue slot for one (as a robots.txt hop does not): its
// caller waits, and holds nothing the slots' holders need.
func (f *Frontier) takeBorrows(items []Item) {
	for _, it := range items {
		h := f.activate(it.Host)
		h.head.pushFront(it)
		h.borrowed++
		f.inHeads++
		f.count(it, 1)
		f.lenders[h] = struct{}{}
		if !h.busy && !h.parked && !h.held && h.heapIdx < 0 {
			heap.Push(&f.ready, h)
		}
	}
}

// lend gives each ready host whose next URL is borrowed to its caller,
// wherever the host is in the ready heap (its caller waits now, and may
// hold a worker's lease while it does), and drops the borrowed URLs whose
// caller is gone. It returns when the first of the hosts it could not
// lend yet will be ready, or the zero time if there is none.
func (f *Frontier) lend(now time.Time) time.Time {
	var next time.Time
	for h := range f.lenders {
		f.dropGone(h)
		if h.borrowed == 0 {
			delete(f.lenders, h)
			continue
		}
		if h.heapIdx < 0 || h.head.peek().borrow == nil {
			// Out, parked or held: lent once back in the heap. Or a
			// worker's URL came back before the borrowed one (a Retry
			// goes first): the workers have it, then the borrowed one.
			continue
		}
		b := h.head.peek().borrow
		at, same := f.lendAt(h, b, now)
		if at.After(now) {
			if next.IsZero() || at.Before(next) {
				next = at
			}
			continue
		}
		l := f.offer(h, now)
		l.SameServer = same
		b.mu.Lock()
		gone := b.gone // read under the lock Borrow sets it under
		if !gone {
			f.taken(h, l, now)
			b.ch <- l
		}
		b.mu.Unlock()
		if gone {
			f.dropGone(h)
			if h.borrowed == 0 {
				delete(f.lenders, h)
			}
		}
	}
	return next
}

// dropGone drops the borrowed URLs at the front of h's queue whose caller
// stopped waiting, and puts h where its queue now says.
func (f *Frontier) dropGone(h *host) {
	dropped := false
	for h.head.len() > 0 && h.head.peek().borrow != nil && h.head.peek().borrow.isGone() {
		f.count(h.head.pop(), -1)
		h.borrowed--
		f.inHeads--
		dropped = true
	}
	switch {
	case !dropped:
	case h.heapIdx >= 0 && h.head.len() == 0:
		heap.Remove(&f.ready, h.heapIdx)
		f.settle(h)
	case h.heapIdx >= 0:
		heap.Fix(&f.ready, h.heapIdx)
	case !h.busy:
		f.settle(h)
	}
}

// lendAt is when h, in the ready heap, may be lent to b, and whether b's
// caller holds a lease on a host of h's server group: that lease's
// request to the server is its caller's to keep apart from this one, so
// it does not hold the borrowed lease back (any other does).
func (f *Frontier) lendAt(h *host, b *borrow, now time.Time) (time.Time, bool) {
	at := h.readyAt()
	g := h.group
	if g == nil || h.clock.GaveUp || h.drain || !h.groupSet {
		return at, false
	}
	out := g.inflight
	same := false
	if fl, ok := f.inflight[b.under]; ok && b.under != 0 && fl.group == g {
		out--
		same = true
	}
	if out > 0 {
		at = later(at, now.Add(f.cfg.IPGap))
	}
	return at, same
}

func (b *borrow) isGone() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.gone
}
