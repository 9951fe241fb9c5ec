// Package crawl runs a crawl: it wires the frontier, robots.txt, the fetcher,
// the parser, the seen set and the WARC writer into one loop.
//
// One URL's life: canonicalise, filter, robots if cached, seen set, frontier;
// lease; robots.txt fresh?; fetch; WARC; parse; admit the links; complete the
// lease, which arms the host's clock. Redirects are not followed inline: the
// target is admitted like a link (with its hop count), so every request, to
// any host, passes robots.txt and waits for its host's clock.
package crawl

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/weft-crawler/weft/internal/archive"
	"github.com/weft-crawler/weft/internal/canon"
	"github.com/weft-crawler/weft/internal/content"
	"github.com/weft-crawler/weft/internal/external"
	"github.com/weft-crawler/weft/internal/fetch"
	"github.com/weft-crawler/weft/internal/fetchlog"
	"github.com/weft-crawler/weft/internal/freelist"
	"github.com/weft-crawler/weft/internal/frontier"
	"github.com/weft-crawler/weft/internal/hostmap"
	"github.com/weft-crawler/weft/internal/importance"
	"github.com/weft-crawler/weft/internal/inforce"
	"github.com/weft-crawler/weft/internal/judge"
	"github.com/weft-crawler/weft/internal/lifecycle"
	"github.com/weft-crawler/weft/internal/neardup"
	"github.com/weft-crawler/weft/internal/policy"
	"github.com/weft-crawler/weft/internal/render"
	"github.com/weft-crawler/weft/internal/robots"
	"github.com/weft-crawler/weft/internal/robotstxt"
	"github.com/weft-crawler/weft/internal/schedule"
	"github.com/weft-crawler/weft/internal/scope"
	"github.com/weft-crawler/weft/internal/seeds"
	"github.com/weft-crawler/weft/internal/seen"
	"github.com/weft-crawler/weft/internal/state"
	"github.com/weft-crawler/weft/internal/store"
	"github.com/weft-crawler/weft/internal/warc"
)

// Crawler runs one crawl. Create it with New, run it once with Run.
type Crawler struct {
	cfg     Config
	cluster Cluster // Config.Cluster, or alone
	log     *slog.Logger
	token   string
	canon   *canon.Canonicalizer
	scope   *scope.Filter
	seen    *seen.Set
	state   *state.State
	front   *frontier.Frontier
	fetcher *fetch.Fetcher
	warc    archive.Writer
	arch    *archive.Archiver             // the WARC files, the capture index and the payload digests
	robots  *robotstxt.Files              // the robots.txt cache and its fetches
	judge   *judge.Judge                  // the rules every URL found is judged by, and the counts of their refusals
	hostCap *hostmap.Map[store.HostState] // per-host counters and rules' state, the URLs accepted first (state.HostStates)
	near    *neardup.Index                // fingerprints of the pages judged original; nil when judging is off
	words   *freelist.List[*[]uint64]     // the arrays pages' word hashes are read into, for near
	rend    *render.Tier                  // the browsers (render.go); nil when rendering is off
	rendOff string                        // why rendering is off though asked for (Chromium missing)
	replay  *archive.Reader               // the crawl's own WARC files read back, for rendering (recall.go); nil otherwise

	// sched says when each URL is due again (continuous mode); recrawler
	// queues the due URLs again, scan by scan.
	sched     *schedule.Planner
	recrawler *schedule.Recrawler
	// pause holds the workers while an operator has paused the crawl.
	pause lifecycle.Gate
	ext   *external.Leases // leases out to external fetchers
	life  *lifecycle.State // whether Run takes work, its frontier answers, its store is open
	// ready is closed when the crawl first takes work, done when it has
	// stopped taking work for good (its store closed).
	ready, done         chan struct{}
	readyOnce, doneOnce sync.Once

	// inlinks counts the in-links of every URL, in continuous mode (nil
	// otherwise).
	inlinks *schedule.InLinks
	// rank estimates the importance of every URL from its in-links: a
	// URL is queued with it, and a host's most important URL goes first.
	rank *importance.Estimator
	// handlers read responses by media type; embeds says one of them
	// wants the images pages show.
	handlers content.Set
	embeds   bool
	policies *Policies // the operators' policies, applied to the hosts' clocks
	stats    *counters
	flog     *fetchlog.Log
	start    time.Time
	seeds    []canon.URL
	seedIDs  []seeds.ID        // seeds[i]'s id
	seedReg  *seeds.Registry   // each seed's options, counts and state
	lists    int               // the last lists of seeds are sitemaps (Config.Sitemaps)
	seedWhy  map[string]string // seeds refused when Run admitted them, and why (set by Run before the workers start)
	resumed  bool
	uploads  *archive.Uploader // finished WARC files on their way to Config.Objects; nil without
	out      *archive.Outbox   // page events on their way to the sinks

	pagesStarted      atomic.Int64
	requisitesStarted atomic.Int64 // requisite and sitemap leases counted against MaxRequisites
	capReached        atomic.Bool
	stopLeasing       context.CancelFunc // set by Run
	failed            atomic.Bool        // fail was called
	stoppedByHook     atomic.Bool        // a hook gave up, its process stopping (ErrStopping)
	endedDrained      atomic.Bool        // EndDrained: a cluster found the whole crawl done
	fatalOnce         sync.Once
	fatalMu           sync.Mutex // fatal is set by fail from any goroutine, the API's too
	fatal             error      // first error that stops the crawl (set once, read after workers exit)
}

// New checks cfg and the seeds, and opens the crawl's state and output
// under DataDir: a directory that holds a crawl is resumed (unless
// Config.Fresh), a WARC file torn by a crash is cut back to its last whole
// record. An invalid seed is an error naming it: a crawl that silently
// skips a seed is worse than one that does not start.
func New(cfg Config) (c *Crawler, err error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.setDefaults()
	c = &Crawler{
		cfg:   cfg,
		log:   cfg.Logger,
		token: robots.ProductToken(cfg.UserAgent),
		canon: canon.New(cfg.Canon),
		stats: newCounters(),
		start: time.Now(), // set here, before anything may read it (Live, from another goroutine)
		life:  &lifecycle.State{},
		ready: make(chan struct{}),
		done:  make(chan struct{}),
	}
	c.cluster = cfg.Cluster
	if c.cluster == nil {
		c.cluster = alone{}
	}
	if c.token == "" {
		return nil, fmt.Errorf("crawl: user agent %q has no product token for robots.txt", cfg.UserAgent)
	}
	if len(cfg.Seeds) == 0 && len(cfg.Sitemaps) == 0 {
		return nil, errors.New("crawl: no seeds")
	}
	if c.scope, err = scope.New(cfg.Scope); err != nil {
		return nil, err
	}
	for _, s := range slices.Concat(cfg.Seeds, cfg.Sitemaps) {
		u, err := canon.ParseSeed(c.canon, s)
		if err != nil {
			return nil, err
		}
		if !cfg.SeedOptions[s].OwnScope() { // one with its own scope does not widen the crawl's
			c.scope.AddSeed(u)
		}
		c.seeds = append(c.seeds, u)
	}
	c.lists = len(cfg.Sitemaps)

	// From here on, whatever was opened is closed again on failure.
	var closers []func() error
	defer func() {
		if err != nil {
			for i := len(closers) - 1; i >= 0; i-- {
				closers[i]()
			}
		}
	}()
	if err := os.MkdirAll(cfg.DataDir, 0o755); err != nil {
		return nil, fmt.Errorf("crawl: data directory: %w", err)
	}
	if c.state, c.resumed, err = state.Open(cfg.DataDir, cfg.Partitions, cfg.Fresh, cfg.StoreFS); err != nil {
		return nil, err
	}
	closers = append(closers, c.state.Close)
	c.out = archive.NewOutbox(cfg.Sinks, c.state.DB, c.log)
	// Each seed's options, id and counts, those of an earlier run first.
	c.seedReg = seeds.NewRegistry(cfg.Scope)
	if c.seedIDs, err = c.seedReg.Open(c.state.DB, c.canon.Parse, c.seeds, slices.Concat(cfg.Seeds, cfg.Sitemaps), cfg.SeedOptions); err != nil {
		return nil, fmt.Errorf("crawl: %w", err)
	}
	// The partition count is the stored crawl's, fixed when it was created.
	c.cfg.Partitions = c.state.Partitions()
	if c.cfg.Policies == nil {
		// Empty, for the operator API to fill.
		c.cfg.Policies = policy.NewSet(c.cfg.policyLimits())
	}
	// Before the policies the API kept: it sets no headers.
	cfg.Fetch.Headers = newRequestHeaders(c.canon, cfg.Headers, c.seeds, c.cfg.Policies)
	if cfg.Fetch.Cookies == nil {
		cfg.Fetch.Cookies = fetch.NewJar()
	}
	if err := inforce.Load(c.state.DB, c.cfg.Policies, c.log); err != nil {
		return nil, err
	}
	c.state.Boosts = c.cfg.Policies // read as each URL is queued: a change applies from then on
	all := c.cfg.Policies.All()
	for _, host := range slices.Sorted(maps.Keys(all)) {
		p := all[host]
		c.log.Info("operator policy", "host", host, "delay", time.Duration(p.Delay), "disallow", p.Disallow, "max_urls", p.MaxURLs, "boost", p.Boost, "boosts", p.Boosts)
	}
	c.hostCap = c.state.HostStates(c.cfg.hostCache(), c.fail)
	c.stats.hosts = c.hostCap
	c.handlers = slices.Clone(c.cfg.Handlers)
	if c.handlers == nil {
		c.handlers = content.Default()
	}
	if !c.cfg.NoSitemaps {
		c.handlers = append(c.handlers, content.Sitemap{})
	}
	if !c.cfg.NoRequisites {
		c.handlers = append(c.handlers, content.Requisites{})
	} else if c.cfg.WithImages {
		c.handlers = append(c.handlers, content.Image{})
	}
	c.handlers = c.handlers.Extend(c.cfg.Extensions...)
	c.embeds = c.handlers.WantsEmbeds()
	if c.cfg.NearDupThreshold >= 0 {
		c.near = neardup.New(c.cfg.NearDupThreshold, c.cfg.NearDupMaxPages, c.state.DB)
		c.words = freelist.New(maxKeptWordArrays, func() *[]uint64 {
			b := make([]uint64, 0, wordArray)
			return &b
		})
		if c.resumed {
			n, err := c.near.Restore()
			if err != nil {
				return nil, fmt.Errorf("crawl: read the fingerprints of an earlier run: %w", err)
			}
			c.log.Info("near-duplicate index rebuilt", "pages", n)
		}
	}
	c.rank = importance.New(int(min(8*max(c.cfg.ExpectedURLs, seen.DefaultExpectedURLs), 256<<20)), c.cfg.ExpectedURLs)
	if cfg.Recrawl != nil && c.cfg.InLinkBytes > 0 {
		if c.inlinks, err = schedule.LoadInLinks(c.state.DB, c.cfg.InLinkBytes, c.log); err != nil {
			return nil, err
		}
	}
	var runStart time.Time
	if cfg.Recrawl == nil && !cfg.KeepAlive {
		// A crawl that ends: a robots.txt found unreachable in it stays
		// so to its end.
		runStart = c.start
	}
	robotsCache := robotstxt.NewCache(robotstxt.CacheConfig{Partitions: c.cfg.Partitions, Bound: c.cfg.robotsCache(),
		Retry: c.cfg.robotsRetry(), RunStart: runStart, MaxCrawlDelay: c.cfg.MaxCrawlDelay})
	c.state.Forwarder = c.cluster
	if c.seen, err = seen.New(seen.Config{ExpectedURLs: cfg.ExpectedURLs, Partitions: c.cfg.Partitions, CacheKeys: cfg.SeenCacheKeys}, c.state); err != nil {
		return nil, err
	}
	if cfg.Recrawl != nil && cfg.Politeness.GiveUpAfter == 0 {
		// A crawl that never ends would give up every host whose pages
		// fail now and then (a 500 page recrawled twenty times): failures
		// park a host, with doubling waits, but never give it up.
		cfg.Politeness.GiveUpAfter = -1
	}
	fcfg := frontier.Config{
		KeepAlive: cfg.Recrawl != nil || cfg.KeepAlive,
		// For HoldPartition: a node of a cluster leases only the hosts
		// of the partitions it owns.
		Partitions: c.cfg.Partitions,
		Delay:      cfg.Delay, MaxActiveHosts: cfg.MaxActiveHosts, FrontBuffer: cfg.FrontBuffer, HeadSize: cfg.HeadSize,
		HostCache: cfg.HostCache, Politeness: cfg.Politeness,
		FailureWait: max(c.cfg.FailureWait, 0),
	}
	if c.cfg.IPGroup != IPGroupOff {
		fcfg.IPGap = c.cfg.IPGap
	}
	if c.resumed {
		fcfg.Resumed = time.Now()
	}
	if c.front, err = c.state.Frontier(fcfg); err != nil {
		return nil, err
	}
	if c.fetcher, err = fetch.New(cfg.Fetch); err != nil {
		return nil, err
	}
	closers = append(closers, func() error { c.fetcher.Close(); return nil })
	c.rend, c.rendOff = render.NewTier(cfg.Render, c.log)
	closers = append(closers, func() error { c.rend.Close(); return nil })
	var warcFix []warc.RecoveredFile
	if c.warc = cfg.Archive; c.warc == nil {
		if err := os.MkdirAll(cfg.warcDir(), 0o755); err != nil {
			return nil, fmt.Errorf("crawl: WARC directory: %w", err)
		}
		if warcFix, err = warc.Recover(cfg.warcDir()); err != nil {
			return nil, err
		}
		// robots.txt is always obeyed: policies can only tighten it.
		wcfg := warc.Config{Dir: cfg.warcDir(), MaxFileSize: cfg.WARCMaxFileSize, UserAgent: cfg.UserAgent, Robots: "obey"}
		if cfg.Objects != nil {
			if c.uploads, err = archive.StartUploads(archive.UploadConfig{Objects: cfg.Objects, DB: c.state.DB, Dir: cfg.warcDir(),
				Wait: cfg.uploadWait, Later: cfg.uploadLater, Log: c.log}); err != nil {
				return nil, err
			}
			closers = append(closers, func() error { c.uploads.Close(0); return nil })
			wcfg.OnFinish = c.uploads.Add
		}
		if c.warc, err = warc.NewWriter(wcfg); err != nil {
			return nil, err
		}
	}
	closers = append(closers, c.warc.Close)
	c.arch = archive.New(c.warc, c.state.DB, c.canon, c.out, warcFix, c.rend != nil)
	if c.rend != nil && cfg.Archive == nil {
		// A browser asking for what the crawl has fetched is answered
		// from the crawl's own WARC files (recall.go).
		c.replay = archive.NewReader(cfg.DataDir, c.state.DB, c.canon, cfg.Objects)
	}
	c.judge = judge.New(judge.Config{
		Canon: c.canon, Scope: c.scope, Seeds: c.seedReg, Seen: c.seen, Guard: c.fetcher, Robots: robotsCache, Policies: c.cfg.Policies,
		Owner: c.cluster, Filters: c.cfg.Filters, Hosts: c.hostCap, Captures: c.state.DB,
		MaxURLsPerHost: c.cfg.MaxURLsPerHost, MaxURLsPerPattern: c.cfg.MaxURLsPerPattern, ExpectedURLs: c.cfg.ExpectedURLs,
		NearDupWindow: c.cfg.NearDupTrapWindow, HostCache: c.cfg.hostCache(), Partitions: c.cfg.Partitions, Log: c.log,
		TrapBudget: c.cfg.TrapBudget, Ends: c.cfg.Recrawl == nil, NoRelease: !c.cluster.Keeps(), // as Requeue: a held entry left stale must stay this node's
	})
	if c.resumed {
		if err := c.judge.LoadCounts(c.state.DB); err != nil {
			return nil, err
		}
		if err := c.rememberHeld(); err != nil {
			return nil, err
		}
		if c.cfg.NearDupThreshold >= 0 && c.cfg.NearDupTrapWindow >= 0 {
			if err := c.judge.LoadCuts(c.state.DB); err != nil {
				return nil, err
			}
		}
	}
	c.ext = external.New(c.canon, robotsCache, c.cfg.Policies, c.log)
	c.policies = inforce.New(inforce.Config{Set: c.cfg.Policies, Limits: c.cfg.policyLimits(), DB: c.state.DB, Robots: robotsCache, Front: c.front,
		Life: c.life, Log: c.log})
	if c.sched, err = schedule.New(schedule.Config{ // after the in-link counts: they weigh in
		Policy: c.cfg.Recrawl, RobotsTTL: c.cfg.RobotsTTL, SharedVisits: c.cfg.SharedVisits, Partitions: c.cfg.Partitions, DB: c.state.DB,
		Canon: c.canon, Robots: robotsCache, Archive: c.arch, InLinks: c.inlinks, Log: c.log,
	}); err != nil {
		return nil, err
	}
	c.recrawler = schedule.NewRecrawler(c.sched, schedule.ScanConfig{
		Queue: requeue{c.state, c.seen, c.front}, Scope: c.scope, Traps: c.judge, Every: c.cfg.RecrawlScan, Delay: c.cfg.Delay,
	})
	if c.flog, err = fetchlog.Open(filepath.Join(cfg.DataDir, "fetches.jsonl")); err != nil {
		return nil, err
	}
	if cfg.CrawlLog != "" {
		if err := c.flog.CrawlLog(cfg.CrawlLog); err != nil {
			_ = c.flog.Close()
			return nil, err
		}
	}
	// The configured Cluster, not alone: on one node (nil) a robots.txt hop
	// to another host is queued on this frontier, not asked of an owner.
	c.robots = robotstxt.New(robotstxt.Config{
		Cache: robotsCache, Token: c.token, DB: c.state.DB, Partitions: c.cfg.Partitions,
		Fetcher: c.fetcher, Canon: c.canon, Frontier: c.front, Archive: c.arch, FetchLog: c.flog, Requests: c.judge,
		Policies: c.cfg.Policies, Cluster: c.cfg.Cluster, Log: c.log, Fail: c.fail,
	})
	return c, nil
}

// Resumed reports whether New found a crawl under DataDir to continue.
func (c *Crawler) Resumed() bool { return c.resumed }

// Progress is safe to call while Run runs.
func (c *Crawler) Progress() Progress {
	fs := c.front.Stats()
	rc := c.robots.Counts()
	last := deref(c.stats.lastError.Load())
	if rc.LastErrorAt.After(last.at) {
		last.text = rc.LastError
	}
	now := time.Now()
	waiting := fs.Wait.Text(now)
	if w := c.recrawlWait(fs, now); w != nil && waiting == "" {
		waiting = w.Text
	}
	return Progress{
		Elapsed:      time.Since(c.start),
		Pages:        c.stats.pages.Load(),
		Errors:       c.stats.errors.Load() + rc.Failed,
		Queued:       c.queuedURLs(fs),
		InFlight:     fs.InFlight,
		HostsReady:   fs.ReadyHosts,
		HostsWaiting: fs.WaitingHost,
		Waiting:      waiting,
		LastError:    last.text,
		Paused:       c.pause.Shut(),
		RevisitBytes: c.arch.Counts().RevisitBytes,
	}
}

// rememberHeld gives the judge back the URLs an earlier run held past
// their families' trap budgets and that still wait, oldest first, up to
// what it remembers (judge.RememberHeld): not the entries held of URLs
// released since, or fetched (stale, state.State.Stale). It reads the
// held queue, a page at a time, until the judge has its fill, or eight
// times that (a trap past its share fills nothing).
func (c *Crawler) rememberHeld() error {
	var after uint64
	kept := c.judge.RememberHeld(nil)
	for read := 0; kept < judge.DefaultMaxWaiting && read < 8*judge.DefaultMaxWaiting; {
		page, err := c.state.Front(judge.HeldPriority, after, 4096)
		if err != nil || len(page) == 0 {
			return err
		}
		read += len(page)
		after = page[len(page)-1].Seq
		waiting := page[:0]
		for _, it := range page {
			if !c.state.Stale(frontier.Lease{Item: it}) {
				waiting = append(waiting, it)
			}
		}
		kept = c.judge.RememberHeld(waiting)
	}
	return nil
}

// copiesQueued is how many of the frontier's queue entries (fs) are a
// second entry of a URL: each URL queued again (state.Batch.Requeue), or
// read back as such an earlier run's copy, adds one, and each entry found
// stale when leased (route, before anything else, whatever the host's
// mode) takes one away: whichever entry of a URL goes first, fetched or
// dropped, stands for the URL. The URLs queued are the entries less
// these. (An entry held past a trap budget whose URL was released,
// state.Batch.Release, is no copy: it waits among the held entries,
// which are not counted as queued, and is dropped as stale uncounted.)
// After a restart it can be off by the URLs whose
// copy an earlier run fetched and whose first copy it left queued: such
// an entry is read back as a URL, and found stale as a copy.
func (c *Crawler) copiesQueued(fs frontier.Stats) int {
	return max(int(c.stats.requeued.Load()-c.stats.droppedCopies.Load())+fs.EarlierAgain, 0)
}

// queuedURLs is the URLs the frontier (fs) has queued: its entries less
// the copies (copiesQueued).
func (c *Crawler) queuedURLs(fs frontier.Stats) int {
	return max(fs.Queued-c.copiesQueued(fs), 0)
}

// close closes what New opened, waiting up to drain for the WARC files
// still to upload (those left stay on disk for the next start).
func (c *Crawler) close(drain time.Duration) error {
	c.rend.Close()
	c.fetcher.Close()
	// Every host's counters and rules' state, for the next run.
	errs := []error{c.state.SaveHostStates(c.hostCap), c.saveInLinks(), c.judge.SaveCounts(c.state.DB), c.warc.Close()}
	if c.uploads != nil {
		// After the WARC writer's Close, which finishes and queues the
		// last file; before the store's, which records each upload.
		c.uploads.Close(drain)
	}
	return errors.Join(append(errs, c.flog.Close(), c.state.Close())...)
}

// fail stops the crawl for an error that makes going on pointless (the
// archive cannot be written): no new leases; in-flight fetches finish.
// fatalErr is the first error that stopped the crawl, nil if none.
func (c *Crawler) fatalErr() error {
	c.fatalMu.Lock()
	defer c.fatalMu.Unlock()
	return c.fatal
}

func (c *Crawler) fail(err error) {
	c.failed.Store(true)
	c.fatalOnce.Do(func() {
		c.fatalMu.Lock()
		c.fatal = err
		c.fatalMu.Unlock()
		c.log.Error("crawl stopped", "err", err)
		c.stopLeasing()
	})
}

func deref[T any](p *T) (v T) {
	if p != nil {
		v = *p
	}
	return v
}
