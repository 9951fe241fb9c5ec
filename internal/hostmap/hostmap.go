// Package hostmap holds a value per host, split by partition as all
// host-keyed state is (partition.Of), each partition behind its own lock:
// no lock spans hosts of different partitions.
//
// A bounded Map (NewBounded) keeps at most a number of hosts per
// partition in memory, the least recently used evicted first: its Backing
// saves each evicted value (to the store) and loads a missing host's
// value back. A value that is Pinned (a robots.txt redirect chain half
// way) is not evicted: the map may then hold more than its bound until it
// is done.
package hostmap

import (
	"sync"

	"github.com/weft-crawler/weft/internal/partition"
)

// Backing is where a bounded Map's values live when they are not in
// memory. Its methods are called under the host's partition lock.
type Backing[V any] interface {
	// Load returns host's value, the zero V when it has none.
	Load(host string) V
	// Save keeps host's value, evicted from memory or flushed.
	Save(host string, v V)
}

// Pinned is implemented by values that must stay in memory while they
// are in use, whatever the bound.
type Pinned interface{ Pinned() bool }

// Map maps hosts to values. It is safe for concurrent use.
type Map[V any] struct {
	parts []part[V]
	bound int        // per partition; 0: unbounded
	back  Backing[V] // nil: evicted values are forgotten, missing ones are the zero V
}

type part[V any] struct {
	mu   sync.Mutex
	m    map[string]*node[V]
	head node[V] // sentinel of the recency list: head.next is the most recent
}

type node[V any] struct {
	host       string
	v          V
	prev, next *node[V]
}

// New returns an unbounded Map.
func New[V any](partitions int) *Map[V] { return NewBounded[V](partitions, 0, nil) }

// NewBounded returns a Map of at most total hosts in memory (at least one
// per partition; 0: unbounded), backed by back (nil: none).
func NewBounded[V any](partitions, total int, back Backing[V]) *Map[V] {
	n := max(partitions, 1)
	h := &Map[V]{parts: make([]part[V], n), back: back}
	if total > 0 {
		h.bound = max(total/n, 1)
	}
	for i := range h.parts {
		p := &h.parts[i]
		p.m = map[string]*node[V]{}
		p.head.next, p.head.prev = &p.head, &p.head
	}
	return h
}

func (p *part[V]) unlink(e *node[V]) {
	e.prev.next, e.next.prev = e.next, e.prev
}

func (p *part[V]) front(e *node[V]) {
	e.next, e.prev = p.head.next, &p.head
	p.head.next.prev = e
	p.head.next = e
}

// node returns host's node, most recent now, loading it if missing.
func (h *Map[V]) node(p *part[V], host string) *node[V] {
	if e := p.m[host]; e != nil {
		p.unlink(e)
		p.front(e)
		return e
	}
	e := &node[V]{host: host}
	if h.back != nil {
		e.v = h.back.Load(host)
	}
	p.m[host] = e
	p.front(e)
	h.evict(p)
	return e
}

// evict drops the least recently used hosts past the bound, skipping
// those pinned.
func (h *Map[V]) evict(p *part[V]) {
	if h.bound == 0 {
		return
	}
	for e := p.head.prev; len(p.m) > h.bound && e != &p.head; {
		prev := e.prev
		if e != p.head.next && !pinned(e.v) {
			p.unlink(e)
			delete(p.m, e.host)
			if h.back != nil {
				h.back.Save(e.host, e.v)
			}
		}
		e = prev
	}
}

func pinned[V any](v V) bool {
	p, ok := any(v).(Pinned)
	return ok && p.Pinned()
}

func (h *Map[V]) part(host string) *part[V] {
	return &h.parts[partition.Of(host, len(h.parts))]
}

// Update stores fn(the host's value, or the zero V) under the partition's
// lock and returns it.
func (h *Map[V]) Update(host string, fn func(V) V) V {
	p := h.part(host)
	p.mu.Lock()
	defer p.mu.Unlock()
	e := h.node(p, host)
	e.v = fn(e.v)
	return e.v
}

// Get returns the host's value, if it has one in memory or (with a
// Backing) in the store.
func (h *Map[V]) Get(host string) (V, bool) {
	p := h.part(host)
	p.mu.Lock()
	defer p.mu.Unlock()
	if e := p.m[host]; e != nil || h.back == nil {
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

// Peek returns the host's value if it is in memory, leaving the recency
// order as it is.
func (h *Map[V]) Peek(host string) (V, bool) {
	p := h.part(host)
	p.mu.Lock()
	defer p.mu.Unlock()
	if e := p.m[host]; e != nil {
		return e.v, true
	}
	var zero V
	return zero, false
}

// Each calls fn with every host in memory and its value, a partition at a
// time, under that partition's lock.
func (h *Map[V]) Each(fn func(host string, v V)) {
	for i := range h.parts {
		p := &h.parts[i]
		p.mu.Lock()
		for k, e := range p.m {
			fn(k, e.v)
		}
		p.mu.Unlock()
	}
}

// Len returns the hosts in memory.
func (h *Map[V]) Len() int {
	n := 0
	for i := range h.parts {
		p := &h.parts[i]
		p.mu.Lock()
		n += len(p.m)
		p.mu.Unlock()
	}
	return n
}

// Flush saves every host in memory to the Backing, keeping them: at
// close, so that the store holds every host's value.
func (h *Map[V]) Flush() {
	if h.back != nil {
		h.Each(h.back.Save)
	}
}
