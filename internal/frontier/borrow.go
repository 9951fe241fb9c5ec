package frontier

import (
	"container/heap"
	"context"
	"sync"
	"time"
)

// borrow is a Borrow call waiting for its host's clock.
type borrow struct {
	mu   sync.Mutex
	ch   chan Lease // buffered: the dispatcher never blocks on it
	gone bool       // the caller stopped waiting
}

// Borrow waits for host's clock exactly as a queued URL does (one lease in
// flight per host, its delay, backoff and server group) and returns a
// lease on url for the caller alone, not for Next's workers: a request
// that is not the crawl's own, such as a browser's subresource while it
// renders a page. The URL goes first in its host's queue, in memory only
// (nothing of it is stored), and is not counted as discovered. The lease
// is completed with Complete like any other; a Retry puts it back for the
// same caller only if it calls Borrow again, so complete it without Retry.
// Borrow returns ctx's error, or ErrStopped once Run has returned; a lease
// given as ctx ends is completed without a request.
//
// A lease held by the caller on the same host would make Borrow wait for
// it: a caller that holds one makes its own requests to that host under it.
func (f *Frontier) Borrow(ctx context.Context, host, url string) (Lease, error) {
	b := &borrow{ch: make(chan Lease, 1)}
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
		f.inHeads++
		f.count(it.Host, 1)
		if !h.busy && !h.parked && !h.held && h.heapIdx < 0 {
			heap.Push(&f.ready, h)
		}
	}
}

// lend gives the ready hosts at the top of the ready heap whose next URL
// is borrowed to their callers, and drops those whose caller is gone.
func (f *Frontier) lend(now time.Time) {
	for {
		h := f.top(now)
		if h == nil || h.key.After(now) || h.head.peek().borrow == nil {
			return
		}
		l := f.offer(h, now)
		b := l.borrow
		b.mu.Lock()
		if b.gone {
			heap.Pop(&f.ready)
			h.head.pop()
			f.inHeads--
			f.count(h.name, -1)
			f.settle(h)
		} else {
			f.taken(l, now)
			b.ch <- l
		}
		b.mu.Unlock()
	}
}
