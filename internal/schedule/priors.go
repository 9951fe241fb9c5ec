package schedule

import (
	"sync"

	"github.com/weft-crawler/weft/internal/partition"
	"github.com/weft-crawler/weft/internal/recrawl"
	"github.com/weft-crawler/weft/internal/store"
)

// maxHostPriors bounds the hosts whose recrawl prior (recrawl.HostPrior)
// is held in memory: about 100 bytes each with the host's name and the
// map's overhead, so at most some 7 MB however many hosts the crawl has.
// Every update is also written to the store (the host prior table) with
// the lease's batch, so a host evicted, or a restart, reads it back.
const maxHostPriors = 65536

// hostPriors holds the hosts' recrawl priors, split by partition like all
// host-keyed state, each part behind its own lock and holding at most its
// share of maxHostPriors; past it an arbitrary host is dropped.
type hostPriors struct {
	db    *store.DB
	parts []hostPriorPart
	per   int
}

type hostPriorPart struct {
	mu sync.Mutex
	m  map[string]recrawl.HostPrior
}

func newHostPriors(db *store.DB, partitions int) *hostPriors {
	n := max(partitions, 1)
	h := &hostPriors{db: db, parts: make([]hostPriorPart, n), per: max(maxHostPriors/n, 1)}
	for i := range h.parts {
		h.parts[i].m = map[string]recrawl.HostPrior{}
	}
	return h
}

// get returns host's prior: the one held, else the one stored (an
// unreadable one is no history), else none. A host read from the store is
// not held: only a visit (observe) makes room for one, so that a scan over
// many hosts does not evict a host whose latest visit is not committed
// yet, which a later read from the store would miss.
func (h *hostPriors) get(host string) recrawl.HostPrior {
	part := partition.Of(host, len(h.parts))
	p := &h.parts[part]
	p.mu.Lock()
	defer p.mu.Unlock()
	if v, ok := p.m[host]; ok {
		return v
	}
	return h.stored(part, host)
}

func (h *hostPriors) stored(part int, host string) recrawl.HostPrior {
	var v recrawl.HostPrior
	if r, ok, err := h.db.GetPrior(uint16(part), host); err == nil && ok {
		v = recrawl.HostPrior{Visits: r.Visits, Changes: r.Changes, Span: r.Span}
	}
	return v
}

// load returns host's prior under p's lock, reading it from the store and
// holding it the first time.
func (h *hostPriors) load(p *hostPriorPart, part int, host string) recrawl.HostPrior {
	if v, ok := p.m[host]; ok {
		return v
	}
	v := h.stored(part, host)
	if len(p.m) >= h.per {
		for k := range p.m {
			delete(p.m, k)
			break
		}
	}
	p.m[host] = v
	return v
}

// observe pools a visit of one of host's pages (its history before and
// after) into the host's prior and returns the record to store.
func (h *hostPriors) observe(host string, prev, next recrawl.History) store.PriorRecord {
	part := partition.Of(host, len(h.parts))
	p := &h.parts[part]
	p.mu.Lock()
	defer p.mu.Unlock()
	v := h.load(p, part, host)
	v.ObserveVisit(prev, next)
	p.m[host] = v
	return store.PriorRecord{Visits: v.Visits, Changes: v.Changes, Span: v.Span}
}
