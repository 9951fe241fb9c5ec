package frontier

import (
	"container/heap"
	"fmt"
)

// readTail reads the next part of a host's tail into its head.
func (f *Frontier) readTail(h *host) {
	items, err := f.store.Tail(h.name, h.tailAfter, f.cfg.HeadSize)
	if err != nil {
		f.fail(fmt.Errorf("read the queue of %s: %w", h.name, err))
		return
	}
	for _, it := range items {
		if class(it.Priority) >= class(Normal) && h.better > 0 {
			h.better--
		}
		it.Tail = true
		if it.Seq < f.firstTailSeq {
			f.count(it, 1) // written by an earlier run
			f.readEarlier(it)
		}
		h.head.push(it)
		f.inHeads++
		h.tailAfter = it.Seq
		f.tailSeq = max(f.tailSeq, it.Seq)
	}
	if len(items) < f.cfg.HeadSize {
		// Read out: it holds nothing better, whatever was counted.
		h.tailMore, h.better, h.fruitless, h.rotateAt = false, 0, 0, 0
	}
}

// readEarlier counts an item an earlier run queued, read back.
func (f *Frontier) readEarlier(it Item) {
	f.earlier++
	if it.Again {
		f.earlierAgain++
	}
}

// refill is Mercator's back-queue selector: it takes URLs from the front
// queues, picked at random in proportion to their weights, into the back
// queues of their hosts, until the URL at the head of the picked queue is
// for a host without a back queue and every back queue is taken. A host's
// robots.txt hop to another host never waits for a slot (its owner holds
// one while it waits), so parked hosts cannot take every slot and stall.
func (f *Frontier) refill() {
	for f.err == nil {
		p, ok := f.pickFront()
		if !ok {
			break
		}
		fq := &f.front[p]
		it := fq.mem.peek()
		h := f.hosts[it.Host]
		if h == nil || !h.activeQ {
			if f.active >= f.cfg.MaxActiveHosts && it.RobotsFor == "" {
				break
			}
			h = f.activate(it.Host)
		}
		fq.mem.pop()
		if p == Surplus {
			// Taken into a back queue: queued like any other now.
			f.surplus--
			f.count(it, 1)
		}
		f.route(h, it)
	}
	f.flushSpill()
}

// activate gives a host a back queue; with a Store, a host not known in
// memory gets its clock from the store.
func (f *Frontier) activate(name string) *host {
	h := f.hosts[name]
	if h == nil {
		h = &host{name: name, heapIdx: -1, held: f.heldNow(name)}
		f.hosts[name] = h
		f.readClock(h)
		if c, ok := f.installed[name]; ok {
			h.clock = installClock(h.clock, c)
			delete(f.installed, name)
		}
		f.takenOver(h)
	}
	if !h.activeQ {
		h.activeQ = true
		f.active++
	}
	return h
}

// readClock gives a host new to memory its clock from the store. After a
// restart (Config.Resumed) no host is leased within a gap of it: a request
// of the last run may have been cut by the crash, to any host, even one
// whose clock was never stored (a robots.txt redirect's target).
func (f *Frontier) readClock(h *host) {
	if f.store == nil {
		return
	}
	stored, found, err := f.store.Clock(h.name)
	if err != nil {
		f.fail(fmt.Errorf("read the clock of %s: %w", h.name, err))
		return
	}
	if found {
		h.clock = stored
	}
	if !f.cfg.Resumed.IsZero() {
		h.clock = h.clock.until(f.cfg.Resumed.Add(f.cfg.gap(h.clock)), WhyGap)
	}
}

// route appends an item to an active host's back queue: to its head in
// memory while that has room and nothing waits on disk before it, else to
// its tail on disk. An item that goes before the least important item of
// the head (Item.Rank, Item.Priority) takes its place there, and that one
// goes to the tail instead: the head holds the most important URLs the
// host has queued since its tail was last read, so a URL found important
// late is not left behind thousands of lesser ones on disk.
func (f *Frontier) route(h *host, it Item) {
	if f.store != nil && it.Seq != 0 && (h.tailMore || h.head.len() >= f.cfg.HeadSize) {
		i, ok := h.head.least()
		if !ok || !before(it, h.head.ranked[i].it) {
			f.toTail(h, it)
			return
		}
		if h.head.len() >= f.cfg.HeadSize {
			f.toTail(h, h.head.remove(i))
			f.inHeads--
		}
	}
	h.head.push(it)
	f.inHeads++
	switch {
	case h.head.len() == 1 && !h.busy && !h.parked && !h.held && h.heapIdx < 0:
		heap.Push(&f.ready, h)
	case h.heapIdx >= 0:
		heap.Fix(&f.ready, h.heapIdx) // its next URL may be another now
	}
}

// toTail sends it, which is not in h's head, to the end of h's tail.
func (f *Frontier) toTail(h *host, it Item) {
	f.spill = append(f.spill, it)
	h.tailMore = true
	if class(it.Priority) >= class(Normal) {
		h.better++
	}
}

// rotateSpan is how many reads in a row that bring nothing of Normal or
// High rotate makes before it waits for the tail to be read past them.
const rotateSpan = 4

// unknownBetter is a host's better when its tail was written by an
// earlier run: it may hold URLs of Normal and High behind Low ones, how
// many is not known, and rotate looks until rotateSpan reads find none.
const unknownBetter = 1 << 30

// rotate serves a host's URLs below Normal (Low, Surplus) after those of
// Normal and High that it sent to its tail, as its head's order would if
// the head held them all: when the best URL left in its head is below
// Normal and its tail may hold better ones (better), the head's URLs
// below Normal go to the end of the tail and the tail's next part is
// read in their place. The head stays within HeadSize but for the URLs
// it keeps there (in memory only, or borrowed). After rotateSpan
// reads in a row that brought nothing of Normal or High (a sitemap's
// thousands of Low URLs ahead of them in the tail), it waits until the
// tail is read, in its order, past where it ended then. An earlier run's
// tail, whose contents are not counted, is looked through the same way
// (unknownBetter).
func (f *Frontier) rotate(h *host) {
	q := &h.head
	if !h.tailMore || h.better == 0 || h.tailAfter < h.rotateAt || h.drain || h.held || h.parked ||
		q.first.len() > 0 || len(q.ranked) == 0 || class(q.ranked[0].it.Priority) >= class(Normal) {
		return
	}
	// In the order they would have been leased: the most important first,
	// and equals in the order they came.
	var keep []Item
	for len(q.ranked) > 0 {
		it := q.ranked.remove(0).it
		if class(it.Priority) >= class(Normal) || it.Seq == 0 || it.borrow != nil {
			keep = append(keep, it)
			continue
		}
		f.toTail(h, it)
		f.inHeads--
	}
	for _, it := range keep {
		q.push(it)
	}
	f.flushSpill()
	was := h.better
	f.readTail(h)
	switch {
	case h.better < was:
		h.fruitless = 0
	case h.fruitless+1 == rotateSpan:
		h.fruitless, h.rotateAt = 0, f.tailSeq
	default:
		h.fruitless++
	}
}

// flushSpill writes the items routed to tails during a refill, in one
// batch, before any tail is read again.
func (f *Frontier) flushSpill() {
	if len(f.spill) == 0 {
		return
	}
	seqs := make([]uint64, len(f.spill))
	for i := range seqs {
		f.tailSeq++
		seqs[i] = f.tailSeq
	}
	if err := f.store.Spill(f.spill, seqs); err != nil {
		f.fail(fmt.Errorf("move %d URLs to their hosts' queues: %w", len(f.spill), err))
	}
	clear(f.spill)
	f.spill = f.spill[:0]
}

// fillFront reads front queue p's next items from disk once its memory is
// half empty.
func (f *Frontier) fillFront(p Priority) {
	fq := &f.front[p]
	if f.store == nil || !fq.onDisk || fq.mem.len() > f.cfg.FrontBuffer/2 || f.err != nil {
		return
	}
	want := f.cfg.FrontBuffer - fq.mem.len()
	items, err := f.store.Front(p, fq.after, want)
	if err != nil {
		f.fail(fmt.Errorf("read the %v front queue: %w", p, err))
		return
	}
	for _, it := range items {
		it.Priority, it.Tail = p, false
		if it.Seq < f.cfg.FirstSeq {
			f.countQueued(it, 1) // queued by an earlier run
			f.readEarlier(it)
		}
		fq.mem.push(it)
		fq.after = it.Seq
	}
	if len(items) < want {
		fq.onDisk = false
	}
}

// pickFront chooses a non-empty front queue at random, in proportion to
// the weights of the non-empty ones. Surplus is chosen only with
// KeepAlive, and only when every other front queue is empty.
func (f *Frontier) pickFront() (Priority, bool) {
	total := 0
	for p := range numPriorities {
		f.fillFront(p)
		if f.front[p].mem.len() > 0 {
			total += f.cfg.Weights[p]
		}
	}
	if total == 0 {
		if !f.cfg.KeepAlive {
			return 0, false
		}
		f.fillFront(Surplus)
		return Surplus, f.front[Surplus].mem.len() > 0
	}
	r := f.rng.IntN(total)
	for p := range numPriorities {
		if f.front[p].mem.len() == 0 {
			continue
		}
		if r < f.cfg.Weights[p] {
			return p, true
		}
		r -= f.cfg.Weights[p]
	}
	panic("unreachable")
}
