// Package frontier orders URLs by priority and releases them under per-host
// politeness.
//
// It is the Mercator frontier of seeds 000 and 003: URLs enter priority front
// queues; a back-queue selector drains them by a weighted random pick into
// per-host back queues, of which at most Config.MaxActiveHosts exist at once;
// a ready heap keyed by each host's next-allowed time decides which host is
// served next. A host whose URL is leased is busy until the lease is
// completed, so at most one request per host is ever in flight, and the next
// lease for that host is not released before the delay has passed. Workers
// never sleep for politeness: Next simply does not return until a host is
// ready.
//
// All state is owned by one goroutine, Run. Add and Complete hand their work
// to it through a short inbox, so neither blocks on the dispatcher, and Next
// is a channel receive: the runtime wakes exactly one waiting worker per
// released lease, and nothing polls.
package frontier

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"
)

// Priority is a URL's front queue. Higher is served more often.
type Priority int

// The priority levels. Seeds are High, discovered links Normal; Low is for
// the long tail (recrawls, sitemap URLs without lastmod, ...).
const (
	Low Priority = iota
	Normal
	High
	numPriorities
)

func (p Priority) String() string {
	switch p {
	case Low:
		return "low"
	case Normal:
		return "normal"
	case High:
		return "high"
	}
	return fmt.Sprintf("priority(%d)", int(p))
}

// Item is one URL waiting to be fetched. The frontier does not judge URLs:
// everything given to Add has already been canonicalised, filtered and found
// new in the seen set.
type Item struct {
	URL      string   // canonical URL
	Host     string   // politeness key: the URL's authority (host[:port])
	Depth    int      // link hops from a seed
	Priority Priority // front queue
	Hops     int      // redirect hops that led here (0 for a link or seed)
	Via      string   // URL that linked or redirected here ("" for a seed)
	// Fetch is the URL to request when it differs from URL: a redirect to
	// a variant of its own URL (a session id the server insists on).
	Fetch string
	// Seq identifies the item's durable queue entry, if the caller keeps
	// one; the frontier only carries it.
	Seq uint64
	// RobotsFor, when set, makes this a hop of that host's robots.txt
	// redirect chain that crossed to Host: it is requested under Host's
	// clock, and that host stays parked until the hop is done.
	RobotsFor string
}

// Config tunes a Frontier. The zero value is usable: no delay beyond one
// request in flight per host, 1024 active back queues, weights 1:4:16.
type Config struct {
	// Delay is the minimum time between the end of one request to a host and
	// the start of the next. A host's Crawl-delay (Result.CrawlDelay) raises
	// it; nothing lowers it. Zero means no gap (benchmarks only).
	Delay time.Duration
	// MaxActiveHosts bounds the number of back queues, i.e. of hosts being
	// crawled at once. Priority decides which hosts get one. Zero means 1024.
	MaxActiveHosts int
	// Weights are the relative chances of the Low, Normal and High front
	// queues being drained next, among the non-empty ones. Every weight must
	// be positive so that no queue starves. Zero means {1, 4, 16}.
	Weights [3]int
	// Seed makes the weighted pick reproducible. Zero means 1.
	Seed uint64
	// KeepAlive keeps Run going when nothing is queued or in flight (a crawl
	// that never ends, fed by Add). Without it Run returns when the frontier
	// drains, and Next returns ErrDrained.
	KeepAlive bool
}

func (c *Config) setDefaults() {
	if c.MaxActiveHosts == 0 {
		c.MaxActiveHosts = 1024
	}
	if c.Weights == [3]int{} {
		c.Weights = [3]int{1, 4, 16}
	}
	if c.Seed == 0 {
		c.Seed = 1
	}
}

// Validate reports the first invalid field.
func (c Config) Validate() error {
	if c.Delay < 0 {
		return fmt.Errorf("frontier: delay %v is negative", c.Delay)
	}
	if c.MaxActiveHosts < 0 {
		return fmt.Errorf("frontier: max active hosts %d is negative", c.MaxActiveHosts)
	}
	if c.Weights != [3]int{} {
		for i, w := range c.Weights {
			if w <= 0 {
				return fmt.Errorf("frontier: weight of %v queue is %d; every weight must be positive so no queue starves", Priority(i), w)
			}
		}
	}
	return nil
}

// Errors returned by Next.
var (
	// ErrDrained means nothing is queued and nothing is in flight.
	ErrDrained = errors.New("frontier: drained")
	// ErrStopped means Run has returned.
	ErrStopped = errors.New("frontier: stopped")
)

// Lease is the right to fetch one URL. It must be given back exactly once
// through Complete; until then its host is busy.
type Lease struct {
	Item
	Queued time.Duration // how long the URL waited since it was added
	id     uint64
}

// Result says what a worker did with a lease.
type Result struct {
	// Fetched is true when a request was sent to the host (for this URL or
	// for its robots.txt): it arms the host's clock. A URL dropped without a
	// request (robots disallow, say) leaves the clock as it was.
	Fetched bool
	// SetCrawlDelay makes CrawlDelay the host's Crawl-delay from now on;
	// without it the host keeps the one it had (a result that does not know
	// the host's robots.txt must not forget its Crawl-delay).
	SetCrawlDelay bool
	// CrawlDelay is the host's Crawl-delay; the host's gap is
	// max(Config.Delay, CrawlDelay).
	CrawlDelay time.Duration
	// Retry puts the URL back at the head of its host's queue, to be leased
	// again after the host's delay (used when the lease was spent fetching
	// robots.txt instead).
	Retry bool
	// Park keeps the host out of the ready heap, with its queue and its
	// clock, until Unpark is called for it: the host waits for something
	// outside its own queue (its robots.txt redirected to another host).
	Park bool
}

// Stats is a snapshot of the frontier's size.
type Stats struct {
	Queued      int // URLs in front and back queues
	Front       int // URLs in front queues
	InFlight    int // leases out
	ActiveHosts int // hosts with a back queue
	ReadyHosts  int // hosts that may be leased now
	WaitingHost int // hosts with URLs whose delay has not passed
	ParkedHosts int // hosts held until Unpark
	KnownHosts  int // hosts the frontier has a clock for
}

// Frontier is safe for concurrent use. Call Run to serve leases.
type Frontier struct {
	cfg Config

	// inbox: filled by Add and Complete, emptied by Run.
	mu         sync.Mutex
	adds       []Item
	completes  []completion
	unparks    []string
	restores   []restore
	kick       chan struct{}
	statsReq   chan chan Stats
	leases     chan Lease
	done       chan struct{}
	runStarted bool
	final      Stats // snapshot taken when Run returns; read after done is closed

	// Owned by Run.
	rng       *rand.Rand
	front     [numPriorities]fifo[queued]
	hosts     map[string]*host
	ready     readyHeap
	active    int
	parked    int
	queued    int
	inflight  map[uint64]*host
	nextLease uint64
}

type queued struct {
	Item
	added time.Time
}

type completion struct {
	lease  Lease
	result Result
}

// host is one host's back queue and clock.
type host struct {
	name       string
	queue      fifo[queued]
	nextAt     time.Time // earliest start of the next request
	crawlDelay time.Duration
	busy       bool
	parked     bool // kept out of the ready heap until Unpark
	activeQ    bool // holds one of the MaxActiveHosts back queues
	heapIdx    int  // index in the ready heap, -1 when absent
}

// New returns a Frontier. It panics on an invalid Config only through
// Validate's error, returned here.
func New(cfg Config) (*Frontier, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.setDefaults()
	return &Frontier{
		cfg:      cfg,
		kick:     make(chan struct{}, 1),
		statsReq: make(chan chan Stats),
		leases:   make(chan Lease),
		done:     make(chan struct{}),
		rng:      rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15)),
		hosts:    make(map[string]*host),
		inflight: make(map[uint64]*host),
	}, nil
}

// Add queues items. It never blocks on the dispatcher and may be called
// before Run. Items added after Run has returned are dropped.
func (f *Frontier) Add(items ...Item) {
	if len(items) == 0 {
		return
	}
	f.mu.Lock()
	f.adds = append(f.adds, items...)
	f.mu.Unlock()
	f.wake()
}

// Restore sets a host's clock as a previous run left it, so that a
// restart does not fire at a host that was just fetched: the host is not
// leased before nextAt, and its Crawl-delay is remembered. Call it before
// Run (or at least before the host's URLs are added).
func (f *Frontier) Restore(host string, nextAt time.Time, crawlDelay time.Duration) {
	f.mu.Lock()
	f.restores = append(f.restores, restore{host, nextAt, crawlDelay})
	f.mu.Unlock()
	f.wake()
}

type restore struct {
	host       string
	nextAt     time.Time
	crawlDelay time.Duration
}

// Complete returns a lease. Completing a lease twice, or a lease from
// another Frontier, has no effect.
func (f *Frontier) Complete(l Lease, r Result) {
	f.mu.Lock()
	f.completes = append(f.completes, completion{l, r})
	f.mu.Unlock()
	f.wake()
}

func (f *Frontier) wake() {
	select {
	case f.kick <- struct{}{}:
	default:
	}
}

// Next blocks until a host is ready and returns a lease on its next URL. It
// returns ErrDrained when the frontier is empty with nothing in flight,
// ErrStopped when Run has returned, or ctx's error.
func (f *Frontier) Next(ctx context.Context) (Lease, error) {
	select {
	case l, ok := <-f.leases:
		if !ok {
			return Lease{}, ErrDrained
		}
		return l, nil
	case <-f.done:
		// Run closes leases before done when it drains; prefer that answer.
		select {
		case _, ok := <-f.leases:
			if !ok {
				return Lease{}, ErrDrained
			}
		default:
		}
		return Lease{}, ErrStopped
	case <-ctx.Done():
		return Lease{}, ctx.Err()
	}
}

// Stats returns a snapshot; once Run has returned, the one taken as it
// returned (what was left queued).
func (f *Frontier) Stats() Stats {
	ch := make(chan Stats, 1)
	select {
	case f.statsReq <- ch:
		return <-ch
	case <-f.done:
		return f.final
	}
}

// Run serves leases until ctx is done or, without KeepAlive, until the
// frontier drains. It returns nil on drain and ctx's error otherwise. Run
// may be called once.
func (f *Frontier) Run(ctx context.Context) error {
	f.mu.Lock()
	if f.runStarted {
		f.mu.Unlock()
		return errors.New("frontier: run called twice")
	}
	f.runStarted = true
	f.mu.Unlock()
	defer func() {
		f.final = f.stats(time.Now())
		close(f.done)
	}()

	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	for {
		f.takeInbox()
		f.refill()
		if !f.cfg.KeepAlive && f.queued == 0 && len(f.inflight) == 0 {
			close(f.leases)
			return nil
		}
		now := time.Now()
		var (
			out   chan Lease
			offer Lease
			timeC <-chan time.Time
		)
		if len(f.ready) > 0 {
			h := f.ready[0]
			if wait := h.nextAt.Sub(now); wait <= 0 {
				out = f.leases
				q := h.queue.peek()
				f.nextLease++
				offer = Lease{Item: q.Item, Queued: now.Sub(q.added), id: f.nextLease}
			} else {
				timer.Reset(wait)
				timeC = timer.C
			}
		}
		select {
		case out <- offer:
			h := heap.Pop(&f.ready).(*host)
			h.queue.pop()
			h.busy = true
			f.queued--
			f.inflight[offer.id] = h
		case <-f.kick:
		case <-timeC:
		case ch := <-f.statsReq:
			ch <- f.stats(now)
		case <-ctx.Done():
			return ctx.Err()
		}
		if timeC != nil && !timer.Stop() {
			// The timer fired but another case won: drain it so the next
			// Reset starts clean.
			select {
			case <-timer.C:
			default:
			}
		}
	}
}

// takeInbox applies pending adds, then completions. Adds first: a worker
// adds a page's links before completing its lease, so the frontier never
// sees the lease back while the links are still on their way, and never
// declares itself drained too early.
func (f *Frontier) takeInbox() {
	f.mu.Lock()
	adds, completes, unparks, restores := f.adds, f.completes, f.unparks, f.restores
	f.adds, f.completes, f.unparks, f.restores = nil, nil, nil, nil
	f.mu.Unlock()
	now := time.Now()
	for _, r := range restores {
		h := f.host(r.host)
		if r.nextAt.After(h.nextAt) {
			h.nextAt = r.nextAt
			if h.heapIdx >= 0 {
				heap.Fix(&f.ready, h.heapIdx)
			}
		}
		h.crawlDelay = r.crawlDelay
	}
	for _, it := range adds {
		p := it.Priority
		if p < Low {
			p = Low
		}
		if p > High {
			p = High
		}
		it.Priority = p
		f.front[p].push(queued{Item: it, added: now})
		f.queued++
	}
	for _, c := range completes {
		f.complete(c, now)
	}
	for _, name := range unparks {
		if h := f.hosts[name]; h != nil && h.parked {
			h.parked = false
			f.parked--
			f.settle(h)
		}
	}
}

func (f *Frontier) complete(c completion, now time.Time) {
	h, ok := f.inflight[c.lease.id]
	if !ok {
		return // unknown or already completed
	}
	delete(f.inflight, c.lease.id)
	h.busy = false
	if c.result.SetCrawlDelay {
		h.crawlDelay = c.result.CrawlDelay
	}
	if c.result.Fetched {
		h.nextAt = now.Add(max(f.cfg.Delay, h.crawlDelay))
	}
	if c.result.Retry {
		h.queue.pushFront(queued{Item: c.lease.Item, added: now.Add(-c.lease.Queued)})
		f.queued++
	}
	if c.result.Park {
		h.parked = true
		f.parked++
	}
	f.settle(h)
}

// settle puts an idle host where it belongs: in the ready heap when it has
// URLs and is not parked; out of the back queues when it has none.
func (f *Frontier) settle(h *host) {
	switch {
	case h.busy || h.heapIdx >= 0:
	case h.queue.len() == 0 && !h.parked:
		if h.activeQ {
			h.activeQ = false
			f.active--
		}
	case h.parked:
		// Holds its back queue (and slot) until unparked.
	default:
		heap.Push(&f.ready, h)
	}
}

// Unpark lets a parked host be leased again once its clock allows. It is a
// no-op for a host that is not parked.
func (f *Frontier) Unpark(host string) {
	f.mu.Lock()
	f.unparks = append(f.unparks, host)
	f.mu.Unlock()
	f.wake()
}

// refill moves URLs from the front queues to back queues until every back
// queue slot is taken or the front queues are empty. A URL whose host
// already has a back queue joins it without taking a slot.
func (f *Frontier) refill() {
	for f.active < f.cfg.MaxActiveHosts {
		q, ok := f.pickFront()
		if !ok {
			return
		}
		h := f.host(q.Host)
		h.queue.push(q)
		if h.activeQ {
			continue
		}
		h.activeQ = true
		f.active++
		if !h.busy {
			heap.Push(&f.ready, h)
		}
	}
}

// host returns the state of a host, creating it.
func (f *Frontier) host(name string) *host {
	h := f.hosts[name]
	if h == nil {
		h = &host{name: name, heapIdx: -1}
		f.hosts[name] = h
	}
	return h
}

// pickFront takes the head of a front queue chosen at random among the
// non-empty ones, in proportion to their weights.
func (f *Frontier) pickFront() (queued, bool) {
	total := 0
	for p := range f.front {
		if f.front[p].len() > 0 {
			total += f.cfg.Weights[p]
		}
	}
	if total == 0 {
		return queued{}, false
	}
	r := f.rng.IntN(total)
	for p := range f.front {
		if f.front[p].len() == 0 {
			continue
		}
		if r < f.cfg.Weights[p] {
			return f.front[p].pop(), true
		}
		r -= f.cfg.Weights[p]
	}
	panic("unreachable")
}

func (f *Frontier) stats(now time.Time) Stats {
	s := Stats{
		Queued:      f.queued,
		InFlight:    len(f.inflight),
		ActiveHosts: f.active,
		ParkedHosts: f.parked,
		KnownHosts:  len(f.hosts),
	}
	for p := range f.front {
		s.Front += f.front[p].len()
	}
	for _, h := range f.ready {
		if !h.nextAt.After(now) {
			s.ReadyHosts++
		} else {
			s.WaitingHost++
		}
	}
	return s
}

// readyHeap orders hosts by next-allowed time; ties go to the host whose
// next URL has the higher priority.
type readyHeap []*host

func (r readyHeap) Len() int { return len(r) }
func (r readyHeap) Less(i, j int) bool {
	if !r[i].nextAt.Equal(r[j].nextAt) {
		return r[i].nextAt.Before(r[j].nextAt)
	}
	return r[i].queue.peek().Priority > r[j].queue.peek().Priority
}
func (r readyHeap) Swap(i, j int) {
	r[i], r[j] = r[j], r[i]
	r[i].heapIdx = i
	r[j].heapIdx = j
}
func (r *readyHeap) Push(x any) {
	h := x.(*host)
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
