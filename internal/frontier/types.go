package frontier

import (
	"errors"
	"fmt"
	"strings"
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

// Surplus is below Low: URLs kept past a budget (a crawl trap's family of
// URLs, bounded by what it is worth). They stay queued, on disk, but
// nothing better ever waits behind them: a frontier without KeepAlive
// never leases one and drains when only they are left (Stats.Surplus
// counts them); with KeepAlive they are taken only when every other
// front queue is empty. Its value comes after High's, so that queues
// stored before it existed keep their meaning.
const Surplus Priority = numPriorities

// numQueues is the number of front queues: one per priority and Surplus.
const numQueues = numPriorities + 1

func (p Priority) String() string {
	switch p {
	case Low:
		return "low"
	case Normal:
		return "normal"
	case High:
		return "high"
	case Surplus:
		return "surplus"
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
	// Rank is the URL's importance as its finder estimated it when it
	// was queued: within a host's back queue the URL of the highest
	// priority, then of the highest Rank, goes first, and among equals
	// the one queued first. Zero is the least.
	Rank uint32
	Hops int    // redirect hops that led here (0 for a link or seed)
	Via  string // URL that linked or redirected here ("" for a seed)
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
	// Requisite says the URL was found as a page's requisite (a style
	// sheet, a script, an image): fetched for what it is, its links not
	// followed.
	Requisite bool
	// Sitemap says the URL was found as a sitemap (a robots.txt Sitemap:
	// line, a host's /sitemap.xml, a sitemap index's entry): like a
	// requisite, it is not a page and does not count against the page
	// budget.
	Sitemap bool
	// Again says the URL was queued again, at a higher rank, while an
	// earlier copy of it waits: a copy leased once the URL is fetched is
	// dropped (its finder judges that).
	Again bool
	// Seed is the id of the seed whose crawl found the URL (package
	// seeds), inherited by its links, redirects, requisites and listed
	// URLs; zero for none.
	Seed uint32
	// Path is how the URL was found from its seed, as Heritrix's
	// discovery path writes it: a letter a hop ("LLE": a link, a link,
	// a requisite), the last 50 kept (crawllog.Extend); "" for a seed.
	// The crawl log writes it.
	Path string
	// RobotsFor, when set, makes this a hop of that host's robots.txt
	// redirect chain that crossed to Host: it is requested under Host's
	// clock, and that host stays parked until the hop is done.
	RobotsFor string

	borrow *borrow // set for a Borrow call's URL: its lease goes to the caller
	back   bool    // put aside (Result.Later) and brought back: Later is not taken again
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
	// leased in ModeFindGroup, for the worker to find it before any
	// request.
	IPGap time.Duration
	// KeepAlive keeps Run going when nothing is queued or in flight (a crawl
	// that never ends, fed by Add). Without it Run returns when the frontier
	// drains, and Next returns ErrDrained.
	KeepAlive bool
	// FailureWait, without KeepAlive, bounds how long Run waits for hosts
	// whose last request failed (Clock.Failing: a 429, a 5xx, a timeout, a
	// robots.txt retried) once they are all that is left: when no lease is
	// out, no host is held by an operator, and every host with URLs is
	// failing, Run returns FailureWait after the last lease that got an
	// answer (a request Fetched with Signal OK), or at once if no clock
	// comes before that. The URLs left stay queued in the Store, for a
	// later run; Stats.Left names their hosts. Zero means Run waits for
	// every clock (a one-shot crawl may then wait for the longest
	// Retry-After); a frontier that drains returns as always. A host that
	// answers pages and failed once since is waited for until its clock,
	// whenever that comes (host.waitedFor).
	FailureWait time.Duration

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
	// clock is armed as if the request had been sent, its outcome unknown
	// (Lost: neither an answer nor a failure). A late
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
	// Spill moves items from where they are, their front queue at
	// Item.Seq or, Item.Tail set, their host's tail at Item.Seq, to the
	// tail of their host, item i at position seqs[i], atomically.
	Spill(items []Item, seqs []uint64) error
	// TailHosts calls fn for every host with a tail, with the tail's last
	// position, until fn returns false. Only active hosts have one, so
	// there are at most about MaxActiveHosts of them.
	TailHosts(fn func(host string, last uint64) bool) error
	// Clock returns a host's stored clock; found is false if it has none.
	Clock(host string) (c Clock, found bool, err error)
}

// The defaults of Config's memory bounds.
const (
	DefaultFrontBuffer = 4096
	DefaultHeadSize    = 64
	DefaultHostCache   = 1 << 17
)

func (cfg *Config) setDefaults() {
	if cfg.MaxActiveHosts == 0 {
		cfg.MaxActiveHosts = 1024
	}
	if cfg.Weights == [3]int{} {
		cfg.Weights = [3]int{1, 4, 16}
	}
	if cfg.Seed == 0 {
		cfg.Seed = 1
	}
	if cfg.FrontBuffer == 0 {
		cfg.FrontBuffer = DefaultFrontBuffer
	}
	if cfg.HeadSize == 0 {
		cfg.HeadSize = DefaultHeadSize
	}
	if cfg.HostCache == 0 {
		cfg.HostCache = DefaultHostCache
	}
	cfg.Politeness.setDefaults(cfg.Delay)
}

// Validate reports the first invalid field.
func (cfg Config) Validate() error {
	if cfg.Delay < 0 {
		return fmt.Errorf("frontier: delay %v is negative", cfg.Delay)
	}
	if cfg.MaxActiveHosts < 0 {
		return fmt.Errorf("frontier: max active hosts %d is negative", cfg.MaxActiveHosts)
	}
	if cfg.FrontBuffer < 0 {
		return fmt.Errorf("frontier: front buffer %d is negative", cfg.FrontBuffer)
	}
	if cfg.HeadSize < 0 {
		return fmt.Errorf("frontier: head size %d is negative", cfg.HeadSize)
	}
	if cfg.HostCache < 0 {
		return fmt.Errorf("frontier: host cache %d is negative", cfg.HostCache)
	}
	if cfg.LeaseTimeout < 0 {
		return fmt.Errorf("frontier: lease timeout %v is negative", cfg.LeaseTimeout)
	}
	if cfg.IPGap < 0 {
		return fmt.Errorf("frontier: IP gap %v is negative", cfg.IPGap)
	}
	if cfg.FailureWait < 0 {
		return fmt.Errorf("frontier: failure wait %v is negative", cfg.FailureWait)
	}
	if err := cfg.Politeness.Validate(); err != nil {
		return err
	}
	if cfg.Weights != [3]int{} {
		for i, w := range cfg.Weights {
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
	// Mode is what the worker is to do with the lease: request the URL,
	// or one of the things that send no request.
	Mode Mode
	// SameServer is set on a lease Borrow gave under a caller's lease on
	// a host of the same server group (Config.IPGap): the group let it
	// out beside the caller's lease, whose own requests must then not
	// overlap it.
	SameServer bool
	// Last says the URL was put aside (Result.Later) and brought back,
	// nothing else being left to lease: a Later on it now counts as a
	// plain Retry.
	Last bool
	// Answered is how many of its host's pages were answered in this
	// run before the lease was given: a host that answers is up, and a
	// 429 or 503 from it is taken as its page's (the crawl puts the URL
	// aside, Result.Later).
	Answered int
	id       uint64
}

// Mode is what a lease asks of its worker. Only ModeRequest may send a
// request; the others were given without waiting for the host's clock, or
// before the host's server is known. A robots.txt hop (Item.RobotsFor)
// comes in any mode: its own host's state decides.
type Mode uint8

// The modes of a lease.
const (
	// ModeRequest: the host's clock allows a request for the URL (or for
	// its robots.txt first).
	ModeRequest Mode = iota
	// ModeGiveUp: the host was given up (Clock.GaveUp): drop the URL,
	// send no request.
	ModeGiveUp
	// ModeDrain: the host drains (Result.Drain): drop the URL, send no
	// request. A worker that finds it needs one after all completes with
	// Retry and DrainStop.
	ModeDrain
	// ModeFindGroup: Config.IPGap is on and the host's server is not known:
	// find it (Result.SetGroup) and retry, without a request.
	ModeFindGroup
)

func (m Mode) String() string {
	switch m {
	case ModeRequest:
		return "request"
	case ModeGiveUp:
		return "give-up"
	case ModeDrain:
		return "drain"
	case ModeFindGroup:
		return "find-group"
	}
	return fmt.Sprintf("mode(%d)", int(m))
}

// Requests reports whether the lease may send a request (ModeRequest).
func (l Lease) Requests() bool { return l.Mode == ModeRequest }

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
	// Later, with Retry, puts the URL aside rather than back at the head
	// of its host's queue: it is not leased again until nothing else is
	// queued or in flight, or nothing but failing hosts' URLs (a frontier
	// that drains leases it then, before it drains), and its entry stays
	// queued on disk, for the next run if this one ends first. A URL
	// brought back so (Lease.Last) is not put aside again. At most
	// Config.FrontBuffer URLs are kept aside in memory; past that one is
	// leased again at once, as one brought back.
	Later bool
	// Park keeps the host out of the ready heap, with its queue and its
	// clock, until Unpark is called for it: the host waits for something
	// outside its own queue (its robots.txt redirected to another host).
	Park bool
	// Hold keeps the host from being asked again for at least this long
	// from now, with or without a request: the crawler's own reason to
	// wait (its robots.txt failed and is retried later). It adds to the
	// clock's gap and any Retry-After rather than replacing them.
	Hold time.Duration
	// HoldRetry says that Hold waits to retry what failed (the host's
	// robots.txt): a failure wait (WhyRetry), where a Hold without it is
	// the crawler's own (WhyHold).
	HoldRetry bool
	// Cause is what the request got when it failed, in a few words
	// ("503", "robots.txt 503", "timeout", "tls"): kept in the clock
	// (Clock.Cause) to say what the host waits for. Empty means the
	// Signal's name.
	Cause string

	// Signal is what the response said of the server's health, Took how
	// long it took (the latency rule), RetryAfter the wait a 429 or 503
	// asked for. They move the clock only when Fetched.
	Signal     Signal
	Took       time.Duration
	RetryAfter time.Duration
	// Clock, if set, is the host's clock to install, as Settle left it
	// (and its caller persisted it); otherwise Complete computes the same
	// itself.
	Clock *Clock
	// SetGroup sets the host's group to Group ("" for none): hosts of one
	// group share the IPGap clock.
	SetGroup bool
	Group    string
	// Drain starts or stops draining the host: while it drains, its URLs
	// are leased one at a time without waiting for its clock, in
	// ModeDrain, because none of them will be requested (its robots.txt
	// disallows everything). It goes on, for the URLs that come later,
	// until a result stops it (DrainStop: a request is needed after all),
	// or until the host is forgotten (Config.HostCache) once its clock has
	// run out.
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
	Earlier int
	// EarlierAgain counts, of those, the copies of a URL queued again
	// (Item.Again): a second entry of a URL read back too.
	EarlierAgain int

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
	// Wait is what the frontier waits for while no host is ready.
	Wait Wait
	// Surplus counts the URLs queued at priority Surplus that this process
	// knows of: kept, and not in Queued.
	Surplus int
	// Pages counts, of Queued, the URLs of pages: neither sitemaps,
	// requisites nor robots.txt hops.
	Pages int
	// Aside counts, of Queued, the URLs put aside (Result.Later) until
	// nothing else is queued or in flight.
	Aside int
	// Left is set in the Stats taken as Run returned because only
	// failing hosts were left (Config.FailureWait): the hosts whose
	// URLs stay queued, with their clocks.
	Left []HostInfo
}

// Wait is what the frontier waits for while no host is ready: the host
// whose clock allows a request first, and why it waits. Host is empty
// when a host is ready now, or no host has URLs.
type Wait struct {
	Host  string
	At    time.Time // when the host may be asked
	Why   Why       // Clock.Why, or WhyGap when its server group's gap (Config.IPGap) is what it waits for
	Cause string    // Clock.Cause
	// Failures says that nothing is in flight and every host with URLs
	// is failing (Clock.Failing); without KeepAlive, Run then returns at
	// GiveUpAt if nothing comes before (Config.FailureWait, or the clock
	// of a host that failed once after answering; zero GiveUpAt means it
	// waits for the clocks).
	Failures bool
	GiveUpAt time.Time
	Held     int // hosts with URLs held by an operator (Hold): they wait for their release
	Parked   int // hosts waiting for another host's robots.txt redirect hop
}

// Text says what the frontier waits for at now, for a person: "58m12s for
// h109.weft.test (robots.txt 503, Retry-After)", with the held and parked
// hosts and, on failures alone, when it stops waiting. Empty when it
// waits for nothing.
func (w Wait) Text(now time.Time) string {
	var parts []string
	if w.Host != "" {
		c := Clock{Why: w.Why, Cause: w.Cause}
		parts = append(parts, fmt.Sprintf("%v for %s (%s)", RoundWait(w.At.Sub(now)), w.Host, c.Reason()))
	}
	if w.Held > 0 {
		parts = append(parts, fmt.Sprintf("%d %s held by the operator", w.Held, plural(w.Held, "host", "hosts")))
	}
	if w.Parked > 0 {
		parts = append(parts, fmt.Sprintf("%d %s waiting for a robots.txt redirect on another host", w.Parked, plural(w.Parked, "host", "hosts")))
	}
	if !w.GiveUpAt.IsZero() {
		parts = append(parts, fmt.Sprintf("nothing but failing hosts left: gives up on them in %v", RoundWait(max(w.GiveUpAt.Sub(now), 0))))
	}
	return strings.Join(parts, "; ")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// RoundWait rounds a wait for a person: to the hundredth of a second
// under one, the tenth under ten, the second above.
func RoundWait(d time.Duration) time.Duration {
	switch {
	case d < time.Second:
		return d.Round(10 * time.Millisecond)
	case d < 10*time.Second:
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(time.Second)
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
