// Package frontier orders URLs by priority and releases them under per-host
// politeness.
//
// It is Heydon and Najork's Mercator frontier: URLs enter priority front
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
//
// # Files
//
// types.go holds what callers see (Config, Item, Lease, Result, Stats);
// frontier.go the Frontier and its inbox; run.go the dispatcher loop,
// which owns every queue and clock; disk.go the front queues and back
// queues' tails on disk; partitions.go holds, handoffs and clock installs;
// politeness.go how a host's clock moves; heaps.go the ready heap and the
// server groups.
package frontier

import (
	"cmp"
	"context"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/weft-crawler/weft/internal/partition"
)

// Frontier is safe for concurrent use. Call Run to serve leases.
type Frontier struct {
	cfg   Config
	store Store

	// inbox: filled by Add and Complete, emptied by Run.
	mu         sync.Mutex
	adds       []Item
	borrows    []Item // Borrow's URLs since the last takeInbox
	completes  []completion
	unparks    []string
	holdHosts  map[string]bool   // Hold's orders since the last takeInbox
	holdParts  map[int]bool      // HoldPartition's orders since the last takeInbox
	takeovers  map[int]time.Time // TakeOverPartition's orders since the last takeInbox
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
	rng            *rand.Rand
	front          [numQueues]frontQueue
	hosts          map[string]*host
	held           map[string]bool   // hosts an operator holds (Hold), by name
	partHeld       map[int]bool      // partitions held (HoldPartition)
	installed      map[string]Clock  // InstallClocks' clocks of hosts not in memory yet
	takenAt        map[int]time.Time // per partition: its last takeover (TakeOverPartition)
	releasing      []clocksReq       // ReleasePartition calls waiting for their partition's leases
	groups         map[string]*group
	lenders        map[*host]struct{}   // hosts with a borrowed URL at the front of their queue
	rearmBusy      map[string]rearmFunc // Rearm's orders for hosts whose lease is out
	ready          readyHeap
	active         int
	parked         int
	queued         int
	surplus        int    // URLs queued at Surplus, not in queued
	pages          int    // of queued, the pages' URLs (isPage)
	aside          []Item // URLs put aside (Result.Later), in queued, until nothing else is queued
	partQueued     []int  // with Config.Partitions: queued, per partition of their hosts
	earlier        int
	earlierAgain   int // of which copies of a URL queued again (Item.Again)
	inHeads        int // URLs in back-queue heads
	inflight       map[uint64]*flight
	expiry         expiryHeap
	expired        int
	nextLease      uint64
	tailSeq        uint64    // last tail position handed out
	firstTailSeq   uint64    // tails below it were written by an earlier run
	spill          []Item    // routed to tails, written at the end of refill
	pruneAt        int       // prune idle hosts when the map reaches this size
	installPruneAt int       // prune installed clocks when the map reaches this size
	err            error     // first store error; Run returns it
	lastUseful     time.Time // the last completion that got an answer (Signal OK), or Run's start
	left           bool      // Run returned with URLs left of failing hosts (Config.FailureWait)
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
	// groupWas is the group's nextAt before the lease took it, and
	// groupGen the group's gen once it had: a lease that sends nothing
	// gives the gap back if nothing moved it since (complete).
	groupWas time.Time
	groupGen uint64
}

// host is one host's back queue and clock.
type host struct {
	name       string
	head       backQueue // the back queue's head, in memory
	borrowed   int32     // borrowed URLs in head (Borrow)
	better     int32     // items of Normal and High sent to the tail and not read back since (rotate)
	tailAfter  uint64    // highest tail position read into head
	tailMore   bool      // the tail on disk may hold items after tailAfter
	fruitless  uint8     // rotations in a row that read nothing of Normal or High (rotate)
	rotateAt   uint64    // no rotation before the tail is read past this position (rotate)
	clock      Clock
	group      *group    // nil: none, or not known yet
	groupSet   bool      // group is known (nil then means none)
	key        time.Time // the ready heap's key: readyAt when last fixed
	drain      bool      // leased without its clock until its queue is empty
	unparked   bool      // Unpark came while busy, before its Complete(Park)
	aside      int32     // its URLs put aside (Result.Later): it is not pruned
	busy       bool
	parked     bool // kept out of the ready heap until Unpark
	held       bool // kept out of the ready heap by an operator (Hold)
	answers    int  // pages it answered in this run (Signal OK): see waitedFor
	failed     int  // requests it failed in this run (as Clock.Errors counts them): see waitedFor
	unanswered int  // requests it got no answer to since its last answered page, 429s included
	activeQ    bool // holds one of the MaxActiveHosts back queues
	heapIdx    int  // index in the ready heap, -1 when absent
}

// New returns a Frontier, or the first error of cfg.Validate.
func New(cfg Config) (*Frontier, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.setDefaults()
	f := &Frontier{
		cfg:            cfg,
		store:          cfg.Store,
		kick:           make(chan struct{}, 1),
		statsReq:       make(chan chan Stats),
		holdsReq:       make(chan holdsReq),
		hostReq:        make(chan hostReq),
		hostsReq:       make(chan hostsReq),
		held:           make(map[string]bool),
		partHeld:       make(map[int]bool),
		installed:      make(map[string]Clock),
		takenAt:        make(map[int]time.Time),
		clocksReq:      make(chan clocksReq),
		releaseReq:     make(chan clocksReq),
		leases:         make(chan Lease),
		done:           make(chan struct{}),
		rng:            rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15)),
		hosts:          make(map[string]*host),
		groups:         make(map[string]*group),
		lenders:        make(map[*host]struct{}),
		inflight:       make(map[uint64]*flight),
		pruneAt:        max(cfg.HostCache, 2*cfg.MaxActiveHosts),
		installPruneAt: cfg.HostCache,
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

// Unpark lets a parked host be leased again once its clock allows. It is a
// no-op for a host that is not parked.
func (f *Frontier) Unpark(host string) {
	f.mu.Lock()
	f.unparks = append(f.unparks, host)
	f.mu.Unlock()
	f.wake()
}
