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
//
// # Queues on disk
//
// With a Store (Config.Store) the queues live on disk and the frontier's
// memory is bounded by configuration, not by the crawl: each front queue
// keeps at most Config.FrontBuffer URLs in memory and each of the at most
// Config.MaxActiveHosts back queues at most Config.HeadSize; the rest stays
// on disk and is read back in batches as those run low. The caller writes
// every new URL to its front queue on disk, at an increasing sequence
// number, in the same atomic batch as whatever makes it seen, and then calls
// Add with the URLs in that order; Add only lets the frontier skip a disk
// read for URLs that fit in memory. When a host's head is full, the
// selector moves its next URLs to the host's tail on disk (Store.Spill)
// rather than leaving them in front of other hosts' URLs, as Mercator moves
// URLs from front to back queues. The hosts known in memory are the active
// ones and those whose clock has not run out; a host that becomes active
// again gets its clock back from the store (Store.Clock).
//
// Without a Store everything is in memory and nothing is bounded but the
// number of active hosts: for tests and small crawls.
package frontier

import (
	"cmp"
	"container/heap"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"weft/internal/partition"
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
	// Seq is the item's position in its durable queue, zero for an item
	// that has none (it then lives in memory only).
	Seq uint64
	// Tail says which durable queue holds the item: its host's tail on
	// disk (true), where the frontier moved it, or its front queue (false,
	// where the caller wrote it). Set by the frontier.
	Tail bool
	// Added is when the URL was first queued; zero means when Add saw it.
	Added time.Time
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
	// Politeness moves a host's clock beyond Delay: latency, backoff,
	// Retry-After, parking and giving up.
	Politeness
	// IPGap, when positive, is the least time between the starts of two
	// requests to hosts that share a server (a Result.Group, such as their
	// IP address): a second clock that hundreds of host names on one
	// shared server go by together. A host whose group is not known yet is
	// leased with NeedGroup set, for the worker to find it before any
	// request.
	IPGap time.Duration
	// KeepAlive keeps Run going when nothing is queued or in flight (a crawl
	// that never ends, fed by Add). Without it Run returns when the frontier
	// drains, and Next returns ErrDrained.
	KeepAlive bool

	// Store keeps the queues on disk (see the package comment). Nil keeps
	// everything in memory.
	Store Store
	// FrontBuffer is how many URLs of each front queue are kept in memory
	// with a Store. Zero means 4096.
	FrontBuffer int
	// HeadSize is how many URLs of each active back queue are kept in
	// memory with a Store. Zero means 64.
	HeadSize int
	// HostCache is how many hosts the frontier keeps in memory with a
	// Store, active or not (about 200 bytes each): an idle host that is
	// kept needs no read of its clock when it becomes active again. Hosts
	// whose clock has run out are forgotten, at random, when the cache is
	// full; one whose clock runs into the future is kept whatever the
	// bound. Zero means 131072 (about 28 MB).
	HostCache int
	// FirstSeq is the first Seq the caller hands out in this process. An
	// item read from the Store with a smaller Seq was queued by an earlier
	// run; it is counted in Stats.Queued when it is read.
	FirstSeq uint64
	// Resumed, when set, is when a restarted crawl started: no host is
	// leased before Resumed plus its gap, so a request cut by the crash is
	// never followed at once by another (with a Store only).
	Resumed time.Time
	// LeaseTimeout, when positive, expires a lease that is not completed in
	// time: its URL goes back to the head of its host's queue and the host's
	// clock is armed as if the request had been sent (and failed). A late
	// Complete of an expired lease is ignored. It is for fetchers that can
	// vanish (outside the process); one that is only slow may then overlap
	// the next request to its host, and must check Holds before it records
	// its result. Zero means leases never expire: in-process workers, whose
	// every fetch is bounded by its own timeouts, need none.
	LeaseTimeout time.Duration
	// Partitions is the crawl's P, for HoldPartition (partition =
	// partition.Of(host, P)); zero means partitions cannot be held.
	Partitions int
}

// Store keeps a frontier's queues on disk. Before calling Add, the caller
// writes each new item to front queue Item.Priority at Item.Seq, with Seqs
// increasing in the order the writes become visible, and calls Add in that
// order. The frontier alone writes hosts' tails. The caller deletes an
// item's entry (front queue or tail, as Item.Tail says) when it is done with
// its lease. Methods are called from Run's goroutine only.
type Store interface {
	// Front returns up to n items of front queue p with Seq > after, in
	// Seq order.
	Front(p Priority, after uint64, n int) ([]Item, error)
	// Tail returns up to n items of host's tail with Seq > after, in Seq
	// order.
	Tail(host string, after uint64, n int) ([]Item, error)
	// Spill moves items from their front queue (at Item.Seq) to the tail of
	// their host, item i at position seqs[i], atomically.
	Spill(items []Item, seqs []uint64) error
	// TailHosts calls fn for every host with a tail, with the tail's last
	// position, until fn returns false. Only active hosts have one, so
	// there are at most about MaxActiveHosts of them.
	TailHosts(fn func(host string, last uint64) bool) error
	// Clock returns a host's stored clock; found is false if it has none.
	Clock(host string) (c Clock, found bool, err error)
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
	if c.FrontBuffer == 0 {
		c.FrontBuffer = 4096
	}
	if c.HeadSize == 0 {
		c.HeadSize = 64
	}
	if c.HostCache == 0 {
		c.HostCache = 1 << 17
	}
	c.Politeness.setDefaults(c.Delay)
}

// Validate reports the first invalid field.
func (c Config) Validate() error {
	if c.Delay < 0 {
		return fmt.Errorf("frontier: delay %v is negative", c.Delay)
	}
	if c.MaxActiveHosts < 0 {
		return fmt.Errorf("frontier: max active hosts %d is negative", c.MaxActiveHosts)
	}
	if c.FrontBuffer < 0 {
		return fmt.Errorf("frontier: front buffer %d is negative", c.FrontBuffer)
	}
	if c.HeadSize < 0 {
		return fmt.Errorf("frontier: head size %d is negative", c.HeadSize)
	}
	if c.HostCache < 0 {
		return fmt.Errorf("frontier: host cache %d is negative", c.HostCache)
	}
	if c.LeaseTimeout < 0 {
		return fmt.Errorf("frontier: lease timeout %v is negative", c.LeaseTimeout)
	}
	if c.IPGap < 0 {
		return fmt.Errorf("frontier: IP gap %v is negative", c.IPGap)
	}
	if err := c.Politeness.Validate(); err != nil {
		return err
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
	// Clock is the host's clock when the lease was given: with Advance, the
	// clock the lease's completion leaves (one lease per host is out, so
	// nothing else moves it meanwhile).
	Clock Clock
	// GaveUp says the host was given up: drop the URL, send no request.
	GaveUp bool
	// NoRequest says the lease was given without waiting for the host's
	// clock (it is given up, or draining): it must not send a request. A
	// worker that finds it needs one completes with Retry and DrainStop.
	NoRequest bool
	// NeedGroup asks the worker to find the host's group (Result.Group)
	// and retry, without a request: Config.IPGap is on and it is unknown.
	NeedGroup bool
	id        uint64
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
	// Hold keeps the host from being asked again for at least this long
	// from now, with or without a request: the crawler's own reason to
	// wait (its robots.txt failed and is retried later). It adds to the
	// clock's gap and any Retry-After rather than replacing them.
	Hold time.Duration

	// Signal is what the response said of the server's health, Took how
	// long it took (the latency rule), RetryAfter the wait a 429 or 503
	// asked for. They move the clock only when Fetched.
	Signal     Signal
	Took       time.Duration
	RetryAfter time.Duration
	// Clock, if set, is the host's clock to install, as the worker
	// computed it with Advance from the lease's Clock (and persisted it);
	// otherwise Complete computes the same itself.
	Clock *Clock
	// SetGroup sets the host's group to Group ("" for none): hosts of one
	// group share the IPGap clock.
	SetGroup bool
	Group    string
	// Drain starts or stops draining the host: while it drains, its URLs
	// are leased one at a time without waiting for its clock, flagged
	// NoRequest, because none of them will be requested (its robots.txt
	// disallows everything). It stops by itself when the queue is empty.
	Drain Drain
}

// Drain is a change to a host's draining (Result.Drain).
type Drain uint8

// Changes to a host's draining.
const (
	DrainKeep  Drain = iota // leave it as it is
	DrainStart              // lease the host's URLs without its clock
	DrainStop               // back to its clock (a request is needed after all)
)

// Stats is a snapshot of the frontier's size.
type Stats struct {
	// Queued counts the URLs queued, in memory or on disk, that this
	// process knows of, but those of held partitions. After a restart,
	// URLs queued by the earlier run are counted as they are read back.
	Queued int
	// PartitionHeld counts the URLs queued for hosts of held partitions
	// (HoldPartition: a cluster node's partitions that another node owns
	// now), kept for a later ownership and not in Queued.
	PartitionHeld int
	// Earlier counts the URLs queued by an earlier run that were read back
	// from the Store so far.
	Earlier     int
	Front       int // URLs in front queues, in memory
	InMemory    int // URLs held in memory: front queues and back-queue heads
	InFlight    int // leases out
	Expired     int // leases expired since the start
	ActiveHosts int // hosts with a back queue
	ReadyHosts  int // hosts that may be leased now
	WaitingHost int // hosts with URLs whose delay has not passed
	ParkedHosts int // hosts held until Unpark
	HeldHosts   int // hosts an operator holds (Hold); HostInfo.Held says the same of one host
	KnownHosts  int // hosts the frontier has a clock for in memory
	Groups      int // server groups (IPGap) known in memory
}

// Frontier is safe for concurrent use. Call Run to serve leases.
type Frontier struct {
	cfg   Config
	store Store

	// inbox: filled by Add and Complete, emptied by Run.
	mu         sync.Mutex
	adds       []Item
	completes  []completion
	unparks    []string
	holdHosts  map[string]bool // Hold's orders since the last takeInbox
	holdParts  map[int]bool    // HoldPartition's orders since the last takeInbox
	clocksIn   map[string]Clock
	rearms     []rearm // Rearm's orders since the last takeInbox
	clocksReq  chan clocksReq
	releaseReq chan clocksReq
	kick       chan struct{}
	statsReq   chan chan Stats
	holdsReq   chan holdsReq
	hostReq    chan hostReq
	hostsReq   chan hostsReq
	leases     chan Lease
	done       chan struct{}
	runStarted bool
	final      Stats // snapshot taken when Run returns; read after done is closed

	// Owned by Run.
	rng          *rand.Rand
	front        [numPriorities]frontQueue
	hosts        map[string]*host
	held         map[string]bool  // hosts an operator holds (Hold), by name
	partHeld     map[int]bool     // partitions held (HoldPartition)
	installed    map[string]Clock // InstallClocks' clocks of hosts not in memory yet
	releasing    []clocksReq      // ReleasePartition calls waiting for their partition's leases
	groups       map[string]*group
	rearmBusy    map[string]rearmFunc // Rearm's orders for hosts whose lease is out
	ready        readyHeap
	active       int
	parked       int
	queued       int
	partQueued   []int // with Config.Partitions: queued, per partition of their hosts
	earlier      int
	inHeads      int // URLs in back-queue heads
	inflight     map[uint64]*flight
	expiry       expiryHeap
	expired      int
	nextLease    uint64
	tailSeq      uint64 // last tail position handed out
	firstTailSeq uint64 // tails below it were written by an earlier run
	spill        []Item // routed to tails, written at the end of refill
	pruneAt      int    // prune idle hosts when the map reaches this size
	err          error  // first store error; Run returns it
}

// frontQueue is one priority's front queue: its head in memory, the rest
// on disk (with a Store).
type frontQueue struct {
	mem    fifo[Item]
	after  uint64 // highest Seq taken into memory, from the disk or from Add
	onDisk bool   // items after `after` may be on disk and not in memory
}

type completion struct {
	lease  Lease
	result Result
}

// flight is a lease that is out.
type flight struct {
	h        *host
	group    *group // the server group it counts in flight for, if any
	item     Item
	id       uint64
	deadline time.Time // with a LeaseTimeout
	expIdx   int       // index in the expiry heap, -1 when absent
}

// host is one host's back queue and clock.
type host struct {
	name      string
	head      fifo[Item] // the back queue's head, in memory
	tailAfter uint64     // highest tail position read into head
	tailMore  bool       // the tail on disk may hold items after tailAfter
	clock     Clock
	group     *group    // nil: none, or not known yet
	groupSet  bool      // group is known (nil then means none)
	key       time.Time // the ready heap's key: readyAt when last fixed
	drain     bool      // leased without its clock until its queue is empty
	unparked  bool      // Unpark came while busy, before its Complete(Park)
	busy      bool
	parked    bool // kept out of the ready heap until Unpark
	held      bool // kept out of the ready heap by an operator (Hold)
	activeQ   bool // holds one of the MaxActiveHosts back queues
	heapIdx   int  // index in the ready heap, -1 when absent
}

// New returns a Frontier, or the first error of cfg.Validate.
func New(cfg Config) (*Frontier, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.setDefaults()
	f := &Frontier{
		cfg:        cfg,
		store:      cfg.Store,
		kick:       make(chan struct{}, 1),
		statsReq:   make(chan chan Stats),
		holdsReq:   make(chan holdsReq),
		hostReq:    make(chan hostReq),
		hostsReq:   make(chan hostsReq),
		held:       make(map[string]bool),
		partHeld:   make(map[int]bool),
		installed:  make(map[string]Clock),
		clocksReq:  make(chan clocksReq),
		releaseReq: make(chan clocksReq),
		leases:     make(chan Lease),
		done:       make(chan struct{}),
		rng:        rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15)),
		hosts:      make(map[string]*host),
		groups:     make(map[string]*group),
		inflight:   make(map[uint64]*flight),
		pruneAt:    max(cfg.HostCache, 2*cfg.MaxActiveHosts),
	}
	f.tailSeq = uint64(time.Now().UnixNano())
	f.firstTailSeq = f.tailSeq + 1
	if f.store != nil {
		// An earlier run may have left URLs in every front queue.
		for p := range f.front {
			f.front[p].onDisk = true
		}
	}
	if f.cfg.Partitions > 0 {
		f.partQueued = make([]int, f.cfg.Partitions)
	}
	return f, nil
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

// Holds reports whether l is still out: neither completed nor expired. A
// fetcher that may outlive its lease (Config.LeaseTimeout) checks it before
// it records its result.
func (f *Frontier) Holds(l Lease) bool {
	ch := make(chan bool, 1)
	select {
	case f.holdsReq <- holdsReq{id: l.id, ch: ch}:
		return <-ch
	case <-f.done:
		return false
	}
}

type holdsReq struct {
	id uint64
	ch chan bool
}

type hostReq struct {
	name string
	ch   chan HostInfo
}

type hostsReq struct {
	limit int
	ch    chan []HostInfo
}

// Hosts returns what the frontier knows of the hosts it holds in memory,
// those with the most URLs in memory first, at most limit. Once Run has
// returned, it knows nothing.
func (f *Frontier) Hosts(limit int) []HostInfo {
	ch := make(chan []HostInfo, 1)
	select {
	case f.hostsReq <- hostsReq{limit: limit, ch: ch}:
		return <-ch
	case <-f.done:
		return nil
	}
}

func (f *Frontier) hostList(limit int, now time.Time) []HostInfo {
	if limit <= 0 {
		return nil
	}
	// The first limit by (queued desc, name), kept in a slice sorted that
	// way: the frontier's goroutine spends O(hosts · log limit) and
	// allocates nothing per host it passes over.
	better := func(a *host, b HostInfo) bool {
		return a.head.len() > b.Queued || a.head.len() == b.Queued && a.name < b.Name
	}
	out := make([]HostInfo, 0, min(limit, len(f.hosts)))
	for name, h := range f.hosts {
		if len(out) == limit && !better(h, out[len(out)-1]) {
			continue
		}
		info := f.hostInfo(name, now)
		i, _ := slices.BinarySearchFunc(out, info, func(a, b HostInfo) int {
			return cmp.Or(cmp.Compare(b.Queued, a.Queued), strings.Compare(a.Name, b.Name))
		})
		if len(out) == limit {
			out = out[:limit-1]
		}
		out = slices.Insert(out, i, info)
	}
	return out
}

// Hold keeps a host out of the ready heap, with its queue and its clock
// (on), or lets it back (off): an operator's pause of one host. A lease
// out on it runs to its end. Holding a host the frontier does not know
// yet holds it when it comes.
func (f *Frontier) Hold(host string, on bool) {
	f.mu.Lock()
	if f.holdHosts == nil {
		f.holdHosts = map[string]bool{}
	}
	f.holdHosts[host] = on
	f.mu.Unlock()
	f.wake()
}

// HoldPartition keeps every host of partition p out of the ready heap
// (on), with its queue and its clock, or lets them back (off) unless an
// operator holds them: a cluster node that does not own p, or no longer
// does, leases none of its hosts. Leases out run to their end. It panics
// if Config.Partitions is zero.
func (f *Frontier) HoldPartition(p int, on bool) {
	if f.cfg.Partitions <= 0 {
		panic("frontier: HoldPartition without Config.Partitions")
	}
	f.mu.Lock()
	if f.holdParts == nil {
		f.holdParts = map[int]bool{}
	}
	f.holdParts[p] = on
	f.mu.Unlock()
	f.wake()
}

type clocksReq struct {
	p  int
	ch chan map[string]Clock
}

// PartitionClocks returns the clocks of partition p's hosts that still
// hold a wait (NextAt after now) and are in memory: what a node handing p
// over passes to the next owner (InstallClocks), so that no host is asked
// sooner than it would have been. It panics if Config.Partitions is zero.
func (f *Frontier) PartitionClocks(p int) map[string]Clock {
	if f.cfg.Partitions <= 0 {
		panic("frontier: PartitionClocks without Config.Partitions")
	}
	ch := make(chan map[string]Clock, 1)
	select {
	case f.clocksReq <- clocksReq{p: p, ch: ch}:
		return <-ch
	case <-f.done:
		return nil
	}
}

func (f *Frontier) partitionClocks(p int, now time.Time) map[string]Clock {
	out := map[string]Clock{}
	for name, h := range f.hosts {
		if h.clock.NextAt.After(now) && partition.Of(name, f.cfg.Partitions) == p {
			out[name] = h.clock
		}
	}
	return out
}

// ReleasePartition holds partition p's hosts (HoldPartition) and returns,
// once no lease on any of them is out (a worker's or an external
// fetcher's, completed or expired), their clocks that still hold a wait,
// the completions applied: a node handing p over leaves those for the next
// owner, which can start as soon as this returns. It returns nil if Run
// has ended.
func (f *Frontier) ReleasePartition(p int) map[string]Clock {
	f.HoldPartition(p, true)
	ch := make(chan map[string]Clock, 1)
	select {
	case f.releaseReq <- clocksReq{p: p, ch: ch}:
	case <-f.done:
		return nil
	}
	select {
	case c := <-ch:
		return c
	case <-f.done:
		return nil
	}
}

// answerReleases answers the ReleasePartition calls whose partition has
// no lease out any more.
func (f *Frontier) answerReleases(now time.Time) {
	if len(f.releasing) == 0 {
		return
	}
	busy := map[int]bool{}
	for _, fl := range f.inflight {
		busy[partition.Of(fl.h.name, f.cfg.Partitions)] = true
	}
	kept := f.releasing[:0]
	for _, r := range f.releasing {
		if busy[r.p] {
			kept = append(kept, r)
			continue
		}
		r.ch <- f.partitionClocks(r.p, now)
	}
	f.releasing = kept
}

// InstallClocks gives each host its given clock, the newer knowledge (a
// previous owner's): its Crawl-delay, backoff and failure counts replace
// what this frontier had, and the next request waits for the later of the
// two NextAt. A host not in memory yet gets it when it comes, over the
// clock it has in the store. A node taking a partition over installs what
// the previous owner passed on before it leases any host.
func (f *Frontier) InstallClocks(clocks map[string]Clock) {
	f.mu.Lock()
	if f.clocksIn == nil {
		f.clocksIn = map[string]Clock{}
	}
	for name, c := range clocks {
		f.clocksIn[name] = installClock(f.clocksIn[name], c)
	}
	f.mu.Unlock()
	f.wake()
}

// rearmFunc is Rearm's argument: a host's new Crawl-delay, or false.
type rearmFunc func(host string, c Clock) (time.Duration, bool)

type rearm struct {
	delay rearmFunc
	done  chan struct{}
}

// Rearm gives the hosts in memory the Crawl-delay delay returns for them
// (false: leave the host as it is) at once, not at the end of their next
// request: an operator's policy changed it. A longer gap pushes the host's
// next request back by as much, so that it still starts the new gap after
// the last one ended (NextAt was armed at least the old gap after that); a
// shorter one lets the wait already armed run out. A host with a lease out
// is re-armed at once and again when the lease comes back, over the clock
// its worker computed, maybe before the change. Hosts not in memory are
// left alone: their last wait has run out, and their next request's
// completion sets the delay. delay runs on Run's goroutine and must not
// call the Frontier. Rearm returns once the clocks are set, so that Host
// shows them, or when Run has returned; call it once Run has started.
func (f *Frontier) Rearm(delay func(host string, c Clock) (time.Duration, bool)) {
	r := rearm{delay: delay, done: make(chan struct{})}
	f.mu.Lock()
	f.rearms = append(f.rearms, r)
	f.mu.Unlock()
	f.wake()
	select {
	case <-r.done:
	case <-f.done:
	}
}

// applyRearms carries out Rearm's orders, after the completions taken
// with them, and again for each host whose lease was out (rearmBusy) once
// it is back.
func (f *Frontier) applyRearms(orders []rearm) {
	for name, delay := range f.rearmBusy {
		if h := f.hosts[name]; h == nil || !h.busy {
			delete(f.rearmBusy, name)
			if h != nil {
				f.rearmHost(h, delay)
			}
		}
	}
	for _, r := range orders {
		for name, h := range f.hosts {
			f.rearmHost(h, r.delay)
			if h.busy {
				if f.rearmBusy == nil {
					f.rearmBusy = map[string]rearmFunc{}
				}
				f.rearmBusy[name] = r.delay
			}
		}
		close(r.done)
	}
}

func (f *Frontier) rearmHost(h *host, delay rearmFunc) {
	d, ok := delay(h.name, h.clock)
	if !ok || d == h.clock.CrawlDelay {
		return
	}
	before := f.cfg.gap(h.clock)
	h.clock.CrawlDelay = d
	if longer := f.cfg.gap(h.clock) - before; longer > 0 && !h.clock.NextAt.IsZero() {
		h.clock.NextAt = h.clock.NextAt.Add(longer)
		f.fix(h)
	}
}

// TakeOver returns clocks as a node taking their hosts over after a crash
// must install them: each host waits at least one gap (the default delay,
// its Crawl-delay or backoff) from at, as after a restart
// (Config.Resumed), since the dead node's last request is not known.
func (f *Frontier) TakeOver(clocks map[string]Clock, at time.Time) map[string]Clock {
	out := make(map[string]Clock, len(clocks))
	for name, c := range clocks {
		c.NextAt = later(c.NextAt, at.Add(f.cfg.gap(c)))
		out[name] = c
	}
	return out
}

// installClock is the clock a host has once given is installed over cur:
// given is the newer knowledge (its last owner's), so its Crawl-delay,
// backoff and failure counts replace cur's, which may be stale (this
// node's memory or store from an earlier ownership; counts that go back
// down after a success must not come back); the next request waits for
// the later of the two.
func installClock(cur, given Clock) Clock {
	given.NextAt = later(cur.NextAt, given.NextAt)
	return given
}

// heldNow says whether host name is held, by an operator or with its
// partition.
func (f *Frontier) heldNow(name string) bool {
	return f.held[name] || len(f.partHeld) > 0 && f.partHeld[partition.Of(name, f.cfg.Partitions)]
}

// setHeld moves a known host in or out of the ready heap as its hold says.
func (f *Frontier) setHeld(h *host) {
	on := f.heldNow(h.name)
	if h.held == on {
		return
	}
	h.held = on
	switch {
	case on && h.heapIdx >= 0:
		heap.Remove(&f.ready, h.heapIdx)
	case !on:
		f.settle(h)
	}
}

// HostInfo is what the frontier knows of one host now.
type HostInfo struct {
	Name       string
	Known      bool  // in memory (a host idle long enough is forgotten, its clock on disk)
	Clock      Clock // the politeness clock
	Queued     int   // URLs of its back queue in memory
	MoreOnDisk bool  // its back queue goes on on disk
	Busy       bool  // a lease is out on it
	Parked     bool  // waiting after failures, or for another host's robots.txt
	Held       bool  // held by an operator (Hold), as Stats.HeldHosts counts
	// PartitionHeld says its partition is held (HoldPartition): a
	// cluster node's host that another node owns now.
	PartitionHeld bool
	Draining      bool // its URLs are dropped without requests (robots.txt disallows all, or given up)
}

// Host returns what the frontier knows of host. Once Run has returned, it
// knows nothing.
func (f *Frontier) Host(name string) HostInfo {
	ch := make(chan HostInfo, 1)
	select {
	case f.hostReq <- hostReq{name: name, ch: ch}:
		return <-ch
	case <-f.done:
		return HostInfo{}
	}
}

func (f *Frontier) hostInfo(name string, _ time.Time) HostInfo {
	h := f.hosts[name]
	held, partHeld := f.held[name], len(f.partHeld) > 0 && f.partHeld[partition.Of(name, f.cfg.Partitions)]
	if h == nil {
		return HostInfo{Name: name, Held: held, PartitionHeld: partHeld}
	}
	return HostInfo{Name: name, Known: true, Clock: h.clock, Queued: h.head.len(), MoreOnDisk: h.tailMore,
		Busy: h.busy, Parked: h.parked, Held: held, PartitionHeld: partHeld, Draining: h.drain}
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
// frontier drains. It returns nil on drain, ctx's error when ctx is done,
// and the Store's error if reading or writing a queue fails. Run may be
// called once.
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

	if f.store != nil {
		// Hosts with a tail were active when the last run stopped: their
		// tails are referenced from nowhere else, so they are taken back
		// first, whatever the bound.
		var hosts []*host
		if err := f.store.TailHosts(func(name string, last uint64) bool {
			h := f.activate(name)
			h.tailMore = true
			hosts = append(hosts, h)
			// New tail positions go after every stored one, even if the
			// clock went back since they were written.
			f.tailSeq = max(f.tailSeq, last)
			return f.err == nil
		}); err != nil {
			return fmt.Errorf("frontier: read tails: %w", err)
		}
		f.firstTailSeq = f.tailSeq + 1
		for _, h := range hosts {
			f.settle(h)
		}
		if f.err != nil {
			return f.err
		}
	}

	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	for {
		f.takeInbox()
		f.refill()
		if f.err != nil {
			return f.err
		}
		if !f.cfg.KeepAlive && f.drained() {
			close(f.leases)
			return nil
		}
		now := time.Now()
		f.expire(now)
		f.answerReleases(now)
		var (
			out   chan Lease
			offer Lease
			wait  time.Duration = -1
		)
		if h := f.top(now); h != nil {
			if w := h.key.Sub(now); w <= 0 {
				out = f.leases
				offer = f.offer(h, now)
			} else {
				wait = w
			}
		}
		if len(f.expiry) > 0 {
			if w := max(f.expiry[0].deadline.Sub(now), 0); wait < 0 || w < wait {
				wait = w
			}
		}
		var timeC <-chan time.Time
		if wait >= 0 {
			timer.Reset(wait)
			timeC = timer.C
		}
		select {
		case out <- offer:
			f.taken(offer, now)
			// Other workers may be waiting too: serve them while hosts
			// are ready, without a whole turn of the loop for each.
			for {
				h := f.top(now)
				if h == nil || h.key.After(now) {
					break
				}
				more := f.offer(h, now)
				select {
				case f.leases <- more:
					f.taken(more, now)
					continue
				default:
				}
				break
			}
		case <-f.kick:
		case <-timeC:
		case ch := <-f.statsReq:
			f.takeInbox() // what was added or completed before the call counts
			ch <- f.stats(now)
		case r := <-f.holdsReq:
			_, ok := f.inflight[r.id]
			r.ch <- ok
		case r := <-f.hostReq:
			r.ch <- f.hostInfo(r.name, now)
		case r := <-f.hostsReq:
			r.ch <- f.hostList(r.limit, now)
		case r := <-f.clocksReq:
			r.ch <- f.partitionClocks(r.p, now)
		case r := <-f.releaseReq:
			f.takeInbox() // the hold ReleasePartition ordered first
			f.releasing = append(f.releasing, r)
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

// offer returns the lease on h's next URL, h being at the top of the ready
// heap and ready.
func (f *Frontier) offer(h *host, now time.Time) Lease {
	it := h.head.peek()
	f.nextLease++
	l := Lease{Item: it, Queued: now.Sub(it.Added), Clock: h.clock, GaveUp: h.clock.GaveUp,
		NoRequest: h.clock.GaveUp || h.drain, id: f.nextLease}
	l.NeedGroup = f.cfg.IPGap > 0 && !h.groupSet && !l.NoRequest
	return l
}

// taken records that a worker took l, offered from the top of the ready
// heap.
func (f *Frontier) taken(l Lease, now time.Time) {
	h := heap.Pop(&f.ready).(*host)
	var g *group
	if h.group != nil && !l.NoRequest && !l.NeedGroup {
		g = h.group
		g.nextAt = now.Add(f.cfg.IPGap)
		g.inflight++
	}
	it := h.head.pop()
	f.inHeads--
	h.busy = true
	f.count(it.Host, -1)
	fl := &flight{h: h, group: g, item: it, id: l.id, expIdx: -1}
	f.inflight[l.id] = fl
	if f.cfg.LeaseTimeout > 0 {
		fl.deadline = now.Add(f.cfg.LeaseTimeout)
		heap.Push(&f.expiry, fl)
	}
}

// count adds n to the URLs queued, for host's partition too.
func (f *Frontier) count(host string, n int) {
	f.queued += n
	if f.partQueued != nil {
		f.partQueued[partition.Of(host, f.cfg.Partitions)] += n
	}
}

// drained reports whether nothing is queued, in memory or on disk, and
// nothing is in flight. Every queued URL is in a front queue or in the back
// queue of an active host.
func (f *Frontier) drained() bool {
	if len(f.inflight) > 0 || f.active > 0 {
		return false
	}
	for p := range f.front {
		if f.front[p].mem.len() > 0 || f.front[p].onDisk {
			return false
		}
	}
	return true
}

// fail records the first store error; Run returns it.
func (f *Frontier) fail(err error) {
	if f.err == nil {
		f.err = fmt.Errorf("frontier: %w", err)
	}
}

// takeInbox applies pending adds, then completions. Adds first: a worker
// adds a page's links before completing its lease, so the frontier never
// sees the lease back while the links are still on their way, and never
// declares itself drained too early.
func (f *Frontier) takeInbox() {
	f.mu.Lock()
	adds, completes, unparks, holds, parts, clocks := f.adds, f.completes, f.unparks, f.holdHosts, f.holdParts, f.clocksIn
	f.adds, f.completes, f.unparks, f.holdHosts, f.holdParts, f.clocksIn = nil, nil, nil, nil, nil, nil
	rearms := f.rearms
	f.rearms = nil
	f.mu.Unlock()
	for name, c := range clocks {
		if h := f.hosts[name]; h != nil {
			h.clock = installClock(h.clock, c)
			f.fix(h)
		} else {
			f.installed[name] = installClock(f.installed[name], c)
		}
	}
	for name, on := range holds {
		if on {
			f.held[name] = true
		} else {
			delete(f.held, name)
		}
		if h := f.hosts[name]; h != nil {
			f.setHeld(h)
		}
	}
	if len(parts) > 0 {
		for p, on := range parts {
			if on {
				f.partHeld[p] = true
			} else {
				delete(f.partHeld, p)
			}
		}
		for _, h := range f.hosts {
			if _, changed := parts[partition.Of(h.name, f.cfg.Partitions)]; changed {
				f.setHeld(h)
			}
		}
	}
	now := time.Now()
	for _, it := range adds {
		f.add(it, now)
	}
	for _, c := range completes {
		f.complete(c, now)
	}
	f.applyRearms(rearms)
	for _, name := range unparks {
		h := f.hosts[name]
		switch {
		case h == nil:
		case h.parked:
			h.parked = false
			f.parked--
			f.settle(h)
		case h.busy:
			// The hop it waits for was done before its own lease came
			// back: the Complete(Park) still on its way must not park it.
			h.unparked = true
		}
	}
	f.prune(now)
}

// add takes an item given to Add into its front queue's memory, unless it
// is on disk and does not fit, or was read from the disk already.
func (f *Frontier) add(it Item, now time.Time) {
	it.Priority = min(max(it.Priority, Low), High)
	it.Tail = false
	if it.Added.IsZero() {
		it.Added = now
	}
	f.count(it.Host, 1)
	fq := &f.front[it.Priority]
	switch {
	case f.store == nil || it.Seq == 0:
		fq.mem.push(it) // lives in memory only
	case it.Seq <= fq.after:
		// Read from the disk while its Add was on the way.
	case !fq.onDisk && fq.mem.len() < f.cfg.FrontBuffer:
		fq.mem.push(it)
		fq.after = it.Seq
	default:
		fq.onDisk = true // read back in order when memory runs low
	}
}

func (f *Frontier) complete(c completion, now time.Time) {
	fl, ok := f.inflight[c.lease.id]
	if !ok {
		return // unknown, expired or already completed
	}
	delete(f.inflight, c.lease.id)
	if fl.expIdx >= 0 {
		heap.Remove(&f.expiry, fl.expIdx)
	}
	h := fl.h
	h.busy = false
	if g := fl.group; g != nil {
		// A server of the group is asked again IPGap after its last
		// request ended, as well as after the last one started.
		g.inflight--
		g.nextAt = later(g.nextAt, now.Add(f.cfg.IPGap))
	}
	if c.result.Clock != nil {
		h.clock = *c.result.Clock
	} else {
		h.clock = f.cfg.advance(h.clock, c.result, now)
	}
	if g := fl.group; g != nil && c.result.Fetched && c.result.Signal == Strained {
		// The server behind the group may still be working on the request
		// it could not finish: none of its hosts is asked before the
		// strained host's backoff has passed.
		g.nextAt = later(g.nextAt, now.Add(h.clock.Backoff))
	}
	if c.result.SetGroup {
		f.setGroup(h, c.result.Group)
		h.groupSet = true
	}
	switch c.result.Drain {
	case DrainStart:
		h.drain = true
	case DrainStop:
		h.drain = false
	}
	if c.result.Retry {
		h.head.pushFront(fl.item)
		f.inHeads++
		f.count(h.name, 1)
	}
	if c.result.Park && !h.unparked {
		h.parked = true
		f.parked++
	}
	h.unparked = false
	f.settle(h)
}

// expire gives back the leases whose time is up, as if their workers had
// fetched and asked for a retry: the host's clock is armed, in case the
// request did go out, and the URL is leased again after the gap.
func (f *Frontier) expire(now time.Time) {
	for len(f.expiry) > 0 && !f.expiry[0].deadline.After(now) {
		f.expired++
		f.complete(completion{lease: Lease{id: f.expiry[0].id}, result: Result{Fetched: true, Retry: true, Signal: Failed}}, now)
	}
}

// settle puts an idle host where it belongs: in the ready heap when it has
// URLs and is not parked; out of the back queues when it has none, on disk
// or in memory.
func (f *Frontier) settle(h *host) {
	if h.busy || h.heapIdx >= 0 {
		return
	}
	if h.head.len() == 0 && h.tailMore {
		f.readTail(h)
	}
	switch {
	case h.head.len() == 0 && !h.parked:
		if h.activeQ {
			h.activeQ = false
			f.active--
		}
		h.drain = false
	case h.parked || h.held:
		// Holds its back queue (and slot) until unparked, or released.
	default:
		heap.Push(&f.ready, h)
	}
}

// readTail reads the next part of a host's tail into its head.
func (f *Frontier) readTail(h *host) {
	items, err := f.store.Tail(h.name, h.tailAfter, f.cfg.HeadSize)
	if err != nil {
		f.fail(fmt.Errorf("read the queue of %s: %w", h.name, err))
		return
	}
	for _, it := range items {
		it.Tail = true
		if it.Seq < f.firstTailSeq {
			f.count(h.name, 1) // written by an earlier run
			f.earlier++
		}
		h.head.push(it)
		f.inHeads++
		h.tailAfter = it.Seq
		f.tailSeq = max(f.tailSeq, it.Seq)
	}
	if len(items) < f.cfg.HeadSize {
		h.tailMore = false
	}
}

// prune forgets idle hosts whose clock has run out, in the map's random
// order, until the map is down to half the cache, once it has reached the
// cache's size (with a Store only: their clocks are on disk). If the hosts
// it must keep fill the cache, the next prune waits until the map has
// doubled, so pruning stays linear in the hosts added.
func (f *Frontier) prune(now time.Time) {
	if f.store == nil || len(f.hosts) < f.pruneAt {
		return
	}
	keep := max(f.cfg.HostCache/2, 2*f.cfg.MaxActiveHosts)
	for name, h := range f.hosts {
		if len(f.hosts) <= keep {
			break
		}
		if !h.activeQ && !h.busy && !h.parked && !h.held && h.head.len() == 0 && !h.clock.NextAt.After(now) {
			f.setGroup(h, "")
			delete(f.hosts, name)
		}
	}
	f.pruneAt = max(f.cfg.HostCache, 2*len(f.hosts))
	for name, g := range f.groups {
		if g.hosts == 0 && !g.nextAt.After(now) {
			delete(f.groups, name)
		}
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
		h.clock.NextAt = later(h.clock.NextAt, f.cfg.Resumed.Add(f.cfg.gap(h.clock)))
	}
}

// route appends an item to an active host's back queue: to its head in
// memory while that has room and nothing waits on disk before it, else to
// its tail on disk.
func (f *Frontier) route(h *host, it Item) {
	if f.store != nil && it.Seq != 0 && (h.tailMore || h.head.len() >= f.cfg.HeadSize) {
		f.spill = append(f.spill, it)
		h.tailMore = true
		return
	}
	h.head.push(it)
	f.inHeads++
	if h.head.len() == 1 && !h.busy && !h.parked && !h.held && h.heapIdx < 0 {
		heap.Push(&f.ready, h)
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
			f.count(it.Host, 1) // queued by an earlier run
			f.earlier++
		}
		fq.mem.push(it)
		fq.after = it.Seq
	}
	if len(items) < want {
		fq.onDisk = false
	}
}

// pickFront chooses a non-empty front queue at random, in proportion to
// the weights of the non-empty ones.
func (f *Frontier) pickFront() (Priority, bool) {
	total := 0
	for p := range f.front {
		f.fillFront(Priority(p))
		if f.front[p].mem.len() > 0 {
			total += f.cfg.Weights[p]
		}
	}
	if total == 0 {
		return 0, false
	}
	r := f.rng.IntN(total)
	for p := range f.front {
		if f.front[p].mem.len() == 0 {
			continue
		}
		if r < f.cfg.Weights[p] {
			return Priority(p), true
		}
		r -= f.cfg.Weights[p]
	}
	panic("unreachable")
}

func (f *Frontier) stats(now time.Time) Stats {
	s := Stats{
		Queued:      f.queued,
		Earlier:     f.earlier,
		InFlight:    len(f.inflight),
		Expired:     f.expired,
		ActiveHosts: f.active,
		ParkedHosts: f.parked,
		HeldHosts:   len(f.held),
		KnownHosts:  len(f.hosts),
	}
	for p := range f.partHeld { // only held ones are in the map
		if p >= 0 && p < len(f.partQueued) {
			s.Queued -= f.partQueued[p]
			s.PartitionHeld += f.partQueued[p]
		}
	}
	for p := range f.front {
		s.Front += f.front[p].mem.len()
	}
	s.InMemory = s.Front + f.inHeads
	s.Groups = len(f.groups)
	for _, h := range f.ready {
		if !h.readyAt().After(now) {
			s.ReadyHosts++
		} else {
			s.WaitingHost++
		}
	}
	return s
}

// group is a set of hosts on one server (Config.IPGap).
type group struct {
	name     string
	nextAt   time.Time // earliest start of the next request to any of its hosts
	hosts    int       // hosts in memory that belong to it
	inflight int       // requests out to it
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
// waits (one request in flight per server, as per host). Keys only ever lag behind (a group's clock
// only moves forward), so the host whose key is still current is the one
// that is ready first.
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
	return r[i].head.peek().Priority > r[j].head.peek().Priority
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

func (e expiryHeap) Len() int           { return len(e) }
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
