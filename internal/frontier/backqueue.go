package frontier

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
	return q.ranked.remove(0).it
}

func (q *backQueue) push(it Item) {
	q.order++
	q.ranked.push(ranked{it: it, order: q.order})
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
func (q *backQueue) remove(i int) Item { return q.ranked.remove(i).it }

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

// rankHeap is a heap of items, the first to lease at index 0. It keeps
// its own order rather than container/heap's, whose interface would box
// every item pushed and popped (an allocation per URL queued).
type rankHeap []ranked

// less says whether item i goes before item j.
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

func (h *rankHeap) push(r ranked) {
	*h = append(*h, r)
	h.up(len(*h) - 1)
}

// remove takes out the item at i and returns it.
func (h *rankHeap) remove(i int) ranked {
	old := *h
	n := len(old) - 1
	r := old[i]
	if i != n {
		old[i] = old[n]
	}
	old[n] = ranked{}
	*h = old[:n]
	if i != n {
		if !h.down(i) {
			h.up(i)
		}
	}
	return r
}

func (h rankHeap) up(j int) {
	for j > 0 {
		i := (j - 1) / 2
		if i == j || !h.less(j, i) {
			break
		}
		h[i], h[j] = h[j], h[i]
		j = i
	}
}

// down sifts the item at i0 down, and reports whether it moved.
func (h rankHeap) down(i0 int) bool {
	i, n := i0, len(h)
	for {
		j := 2*i + 1
		if j >= n {
			break
		}
		if r := j + 1; r < n && h.less(r, j) {
			j = r
		}
		if !h.less(j, i) {
			break
		}
		h[i], h[j] = h[j], h[i]
		i = j
	}
	return i > i0
}
