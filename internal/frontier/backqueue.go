package frontier

import "container/heap"

// backQueue is the head of a host's back queue, in memory: its most
// important URL first. Importance is the item's priority (Surplus least),
// then its Rank; among equals the URL that came first goes first, so that
// a crawl that ranks nothing keeps Mercator's first-in, first-out order.
// An item put back in front (a retry, a borrowed URL) goes before every
// ranked one, and before those put back earlier.
//
// It is a heap: pushing and taking cost O(log n), whatever a host queues
// in memory (without a Store nothing bounds a head). Finding the least
// important item, which only a full head does to make room, costs O(n)
// over Config.HeadSize items.
type backQueue struct {
	first  fifo[Item]
	ranked rankHeap
	order  uint64 // arrival counter of ranked items
}

type ranked struct {
	it    Item
	order uint64
}

func (q *backQueue) len() int { return q.first.len() + len(q.ranked) }

func (q *backQueue) peek() Item {
	if q.first.len() > 0 {
		return q.first.peek()
	}
	return q.ranked[0].it
}

func (q *backQueue) pop() Item {
	if q.first.len() > 0 {
		return q.first.pop()
	}
	return heap.Pop(&q.ranked).(ranked).it
}

func (q *backQueue) push(it Item) {
	q.order++
	heap.Push(&q.ranked, ranked{it: it, order: q.order})
}

// pushFront puts it first.
func (q *backQueue) pushFront(it Item) { q.first.pushFront(it) }

// least returns the index in ranked of the least important item that may
// leave the head for the host's tail on disk (one with a place in a
// Store's queue), and whether there is one.
func (q *backQueue) least() (int, bool) {
	at := -1
	for i := range q.ranked {
		r := &q.ranked[i]
		if r.it.Seq == 0 || r.it.borrow != nil {
			continue
		}
		if at < 0 || q.ranked.less(at, i) {
			at = i
		}
	}
	return at, at >= 0
}

// remove takes the ranked item at index i out of the head.
func (q *backQueue) remove(i int) Item { return heap.Remove(&q.ranked, i).(ranked).it }

// before reports whether a goes before b in a back queue.
func before(a, b Item) bool {
	if ca, cb := class(a.Priority), class(b.Priority); ca != cb {
		return ca > cb
	}
	return a.Rank > b.Rank
}

// class orders priorities with Surplus below Low.
func class(p Priority) int {
	if p == Surplus {
		return -1
	}
	return int(p)
}

// rankHeap is a max-heap of items: the first to lease at index 0.
type rankHeap []ranked

func (h rankHeap) Len() int { return len(h) }

// less says whether item i goes before item j ("less" for container/heap,
// whose minimum is served first).
func (h rankHeap) less(i, j int) bool {
	a, b := &h[i], &h[j]
	if before(a.it, b.it) {
		return true
	}
	if before(b.it, a.it) {
		return false
	}
	return a.order < b.order
}

func (h rankHeap) Less(i, j int) bool { return h.less(i, j) }
func (h rankHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *rankHeap) Push(x any)        { *h = append(*h, x.(ranked)) }

func (h *rankHeap) Pop() any {
	old := *h
	r := old[len(old)-1]
	old[len(old)-1] = ranked{}
	*h = old[:len(old)-1]
	return r
}
