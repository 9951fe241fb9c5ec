package frontier

import (
	"container/heap"
	"time"
)

// group is a set of hosts on one server (Config.IPGap).
type group struct {
	name     string
	nextAt   time.Time // earliest start of the next request to any of its hosts
	hosts    int       // hosts in memory that belong to it
	inflight int       // requests out to it
	// gen counts the moves of nextAt by a lease taken or a request ended:
	// a lease that sent nothing gives its gap back only if none came since.
	gen uint64
	// strained is when the hold after the last request to it cut by
	// strain ends: a wait for the group until then is that backoff's,
	// not the gap's (Frontier.waiting).
	strained time.Time
	// strains counts the requests to it cut by strain since one of its
	// hosts last answered: the group's hold doubles with each, as a
	// host's backoff does with its own (Frontier.strainHold).
	strains int
}

// readyAt is when the host may be leased: its own clock and its group's
// both allow it. A host given up or draining is ready at once (no request
// is sent).
func (h *host) readyAt() time.Time {
	if h.clock.GaveUp || h.drain {
		return time.Time{}
	}
	if h.group != nil && h.group.nextAt.After(h.clock.NextAt) {
		return h.group.nextAt
	}
	return h.clock.NextAt
}

// fix moves a host in the ready heap after its readyAt changed.
func (f *Frontier) fix(h *host) {
	if h.heapIdx >= 0 {
		h.key = h.readyAt()
		heap.Fix(&f.ready, h.heapIdx)
	}
}

// top returns the host at the top of the ready heap, after bringing its
// key up to date: a lease to another host of its group since it was pushed
// may have moved its readyAt, and while a request to its server is out it
// waits (one request in flight per server, as per host). Keys lag behind
// (a group's clock moves forward with each request), so the host whose
// key is still current is the one that is ready first; a key can run
// ahead only by a gap a lease that sent nothing gave back (complete),
// which makes its host wait at most that gap longer, never less.
func (f *Frontier) top(now time.Time) *host {
	for len(f.ready) > 0 {
		h := f.ready[0]
		at := h.readyAt()
		if g := h.group; g != nil && g.inflight > 0 && !h.clock.GaveUp && !h.drain && h.groupSet {
			// A request to its server is out: at least IPGap from now,
			// looked at again then if it is still out.
			at = later(at, now.Add(f.cfg.IPGap))
		}
		if !at.After(h.key) {
			h.key = at // the top stays the top with a key no later
			return h
		}
		h.key = at
		heap.Fix(&f.ready, 0)
	}
	return nil
}

// setGroup puts a host in the named group ("": none).
func (f *Frontier) setGroup(h *host, name string) {
	if h.group != nil {
		if h.group.name == name {
			return
		}
		h.group.hosts--
		if h.group.hosts == 0 && !h.group.nextAt.After(time.Now()) {
			delete(f.groups, h.group.name)
		}
		h.group = nil
	}
	if name == "" {
		return
	}
	g := f.groups[name]
	if g == nil {
		g = &group{name: name}
		f.groups[name] = g
	}
	g.hosts++
	h.group = g
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// readyHeap orders hosts by next-allowed time; ties go to the host whose
// next URL has the higher priority.
type readyHeap []*host

func (r readyHeap) Len() int { return len(r) }

func (r readyHeap) Less(i, j int) bool {
	if !r[i].key.Equal(r[j].key) {
		return r[i].key.Before(r[j].key)
	}
	return class(r[i].head.peek().Priority) > class(r[j].head.peek().Priority)
}

func (r readyHeap) Swap(i, j int) {
	r[i], r[j] = r[j], r[i]
	r[i].heapIdx = i
	r[j].heapIdx = j
}

func (r *readyHeap) Push(x any) {
	h := x.(*host)
	h.key = h.readyAt()
	h.heapIdx = len(*r)
	*r = append(*r, h)
}

func (r *readyHeap) Pop() any {
	old := *r
	h := old[len(old)-1]
	old[len(old)-1] = nil
	*r = old[:len(old)-1]
	h.heapIdx = -1
	return h
}

// expiryHeap orders the leases out by deadline.
type expiryHeap []*flight

func (e expiryHeap) Len() int { return len(e) }

func (e expiryHeap) Less(i, j int) bool { return e[i].deadline.Before(e[j].deadline) }

func (e expiryHeap) Swap(i, j int) {
	e[i], e[j] = e[j], e[i]
	e[i].expIdx = i
	e[j].expIdx = j
}

func (e *expiryHeap) Push(x any) {
	fl := x.(*flight)
	fl.expIdx = len(*e)
	*e = append(*e, fl)
}

func (e *expiryHeap) Pop() any {
	old := *e
	fl := old[len(old)-1]
	old[len(old)-1] = nil
	*e = old[:len(old)-1]
	fl.expIdx = -1
	return fl
}
