package crawl

import (
	"sync"

	"weft/internal/partition"
)

// hostMap maps hosts to values, split by partition like all host-keyed
// state, each partition behind its own lock: no lock spans hosts of
// different partitions.
type hostMap[V any] struct {
	parts []hostMapPart[V]
}

type hostMapPart[V any] struct {
	mu sync.Mutex
	m  map[string]V
}

func newHostMap[V any](partitions int) *hostMap[V] {
	h := &hostMap[V]{parts: make([]hostMapPart[V], max(partitions, 1))}
	for i := range h.parts {
		h.parts[i].m = map[string]V{}
	}
	return h
}

// update stores fn(the host's value, or the zero V) under the partition's
// lock and returns it.
func (h *hostMap[V]) update(host string, fn func(V) V) V {
	p := &h.parts[partition.Of(host, len(h.parts))]
	p.mu.Lock()
	defer p.mu.Unlock()
	v := fn(p.m[host])
	p.m[host] = v
	return v
}

// get returns the host's value, if it has one.
func (h *hostMap[V]) get(host string) (V, bool) {
	p := &h.parts[partition.Of(host, len(h.parts))]
	p.mu.Lock()
	defer p.mu.Unlock()
	v, ok := p.m[host]
	return v, ok
}

// each calls fn with every host and its value, a partition at a time.
func (h *hostMap[V]) each(fn func(host string, v V)) {
	for i := range h.parts {
		p := &h.parts[i]
		p.mu.Lock()
		for k, v := range p.m {
			fn(k, v)
		}
		p.mu.Unlock()
	}
}
