package crawl

import (
	"sync"

	"github.com/weft-crawler/weft/internal/partition"
)

// hostMap maps hosts to values, split by partition like all host-keyed
// state, each partition behind its own lock: no lock spans hosts of
// different partitions.
//
// A bounded map (newBoundedHostMap) keeps at most a number of hosts per
// partition, least recently used evicted first: drop is told of each
// evicted value (to save it in the store) and load reads a missing host's
// value back (from the store). A value keep says is in use (a robots.txt
// chain half way) is not evicted: the map may then hold more than its
// bound until it is done.
type hostMap[V any] struct {
	parts []hostMapPart[V]
	bound int                         // per partition; 0: unbounded
	load  func(host string) V         // a missing host's value; nil: the zero V
	drop  func(host string, v V)      // told of an evicted value; may be nil
	keep  func(host string, v V) bool // in use: not evicted; may be nil
}

type hostMapPart[V any] struct {
	mu   sync.Mutex
	m    map[string]*hostNode[V]
	head hostNode[V] // sentinel of the recency list: head.next is the most recent
}

type hostNode[V any] struct {
	host       string
	v          V
	prev, next *hostNode[V]
}

func newHostMap[V any](partitions int) *hostMap[V] {
	return newBoundedHostMap[V](partitions, 0, nil, nil, nil)
}

// newBoundedHostMap returns a hostMap of at most total hosts (at least one
// per partition; 0: unbounded) with the given hooks, each called under the
// host's partition lock.
func newBoundedHostMap[V any](partitions, total int, load func(string) V, drop func(string, V), keep func(string, V) bool) *hostMap[V] {
	n := max(partitions, 1)
	h := &hostMap[V]{parts: make([]hostMapPart[V], n), load: load, drop: drop, keep: keep}
	if total > 0 {
		h.bound = max(total/n, 1)
	}
	for i := range h.parts {
		p := &h.parts[i]
		p.m = map[string]*hostNode[V]{}
		p.head.next, p.head.prev = &p.head, &p.head
	}
	return h
}

func (p *hostMapPart[V]) unlink(e *hostNode[V]) {
	e.prev.next, e.next.prev = e.next, e.prev
}

func (p *hostMapPart[V]) front(e *hostNode[V]) {
	e.next, e.prev = p.head.next, &p.head
	p.head.next.prev = e
	p.head.next = e
}

// node returns host's node, most recent now, loading it if missing.
func (h *hostMap[V]) node(p *hostMapPart[V], host string) *hostNode[V] {
	if e := p.m[host]; e != nil {
		p.unlink(e)
		p.front(e)
		return e
	}
	e := &hostNode[V]{host: host}
	if h.load != nil {
		e.v = h.load(host)
	}
	p.m[host] = e
	p.front(e)
	h.evict(p)
	return e
}

// evict drops the least recently used hosts past the bound, skipping
// those in use.
func (h *hostMap[V]) evict(p *hostMapPart[V]) {
	if h.bound == 0 {
		return
	}
	for e := p.head.prev; len(p.m) > h.bound && e != &p.head; {
		prev := e.prev
		if e != p.head.next && (h.keep == nil || !h.keep(e.host, e.v)) {
			p.unlink(e)
			delete(p.m, e.host)
			if h.drop != nil {
				h.drop(e.host, e.v)
			}
		}
		e = prev
	}
}

func (h *hostMap[V]) part(host string) *hostMapPart[V] {
	return &h.parts[partition.Of(host, len(h.parts))]
}

// update stores fn(the host's value, or the zero V) under the partition's
// lock and returns it.
func (h *hostMap[V]) update(host string, fn func(V) V) V {
	p := h.part(host)
	p.mu.Lock()
	defer p.mu.Unlock()
	e := h.node(p, host)
	e.v = fn(e.v)
	return e.v
}

// get returns the host's value, if it has one in memory or (with a
// loader) in the store.
func (h *hostMap[V]) get(host string) (V, bool) {
	p := h.part(host)
	p.mu.Lock()
	defer p.mu.Unlock()
	if e := p.m[host]; e != nil || h.load == nil {
		if e == nil {
			var zero V
			return zero, false
		}
		p.unlink(e)
		p.front(e)
		return e.v, true
	}
	return h.node(p, host).v, true
}

// peek returns the host's value if it is in memory, leaving the recency
// order as it is.
func (h *hostMap[V]) peek(host string) (V, bool) {
	p := h.part(host)
	p.mu.Lock()
	defer p.mu.Unlock()
	if e := p.m[host]; e != nil {
		return e.v, true
	}
	var zero V
	return zero, false
}

// each calls fn with every host in memory and its value, a partition at a
// time.
func (h *hostMap[V]) each(fn func(host string, v V)) {
	for i := range h.parts {
		p := &h.parts[i]
		p.mu.Lock()
		for k, e := range p.m {
			fn(k, e.v)
		}
		p.mu.Unlock()
	}
}

// len returns the hosts in memory.
func (h *hostMap[V]) len() int {
	n := 0
	for i := range h.parts {
		p := &h.parts[i]
		p.mu.Lock()
		n += len(p.m)
		p.mu.Unlock()
	}
	return n
}

// flush tells drop of every host in memory, keeping them: at close, so
// that the store holds every host's value.
func (h *hostMap[V]) flush() {
	if h.drop == nil {
		return
	}
	h.each(h.drop)
}
