// Package crawl runs a crawl: it wires the frontier, robots.txt, the fetcher,
// the parser, the seen set and the WARC writer into the loop of DESIGN.md.
//
// One URL's life: canonicalise, filter, robots if cached, seen set, frontier;
// lease; robots.txt fresh?; fetch; WARC; parse; admit the links; complete the
// lease, which arms the host's clock. Redirects are not followed inline: the
// target is admitted like a link (with its hop count), so every request, to
// any host, passes robots.txt and waits for its host's clock.
package crawl

import (
	"bufio"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"crypto/sha256"

	"weft/internal/canon"
	"weft/internal/content"
	"weft/internal/fetch"
	"weft/internal/frontier"
	"weft/internal/partition"
	"weft/internal/policy"
	"weft/internal/robots"
	"weft/internal/scope"
	"weft/internal/seen"
	"weft/internal/simhash"
	"weft/internal/sketch"
	"weft/internal/store"
	"weft/internal/warc"
)

// Crawler runs one crawl. Create it with New, run it once with Run.
type Crawler struct {
	cfg     Config
	log     *slog.Logger
	token   string
	canon   *canon.Canonicalizer
	scope   *scope.Filter
	seen    *seen.Set
	state   *durable
	front   *frontier.Frontier
	fetcher *fetch.Fetcher
	warc    ArchiveWriter
	robots  *robotsCache
	hostCap *hostMap[int64] // URLs accepted per host
	traps   *trapCounts     // URLs accepted per pattern, requests per host, trap refusals
	digests digestShards    // one payload digest looked up and recorded at a time
	near    *nearIndex      // fingerprints of the pages judged original; nil when judging is off

	// aliases holds, per origin, what its directories and their index
	// files have shown (alias.go).
	aliases *hostMap[aliasState]

	// dueCur is where the last recrawl scan stopped in the recrawl index
	// (the scanning goroutine's own); recrawling counts the recrawls
	// queued and not yet done, per host.
	dueCur     dueCursor
	recrawling outstanding
	// listed holds what sitemaps said of known URLs, for the next scan.
	listed listedHints
	// priors holds the hosts' recrawl priors (continuous mode).
	priors *hostPriors
	// pause holds the workers while an operator has paused the crawl;
	// running is true while Run may take seeds (AddSeeds holds liveMu
	// for reading while it works, Run for writing to end it).
	pause   gate
	ext     externals // leases out to external fetchers
	liveMu  sync.RWMutex
	running bool
	closed  bool // the store is closed: nothing more can be read (liveMu)
	frontUp bool // the frontier's Run was started (liveMu): before, it answers nothing

	partHeld []atomic.Bool // per partition: held (HoldPartition), not to be recrawled here

	// Robots.txt hops across the nodes of a cluster (hops.go): those this
	// node asked another to make, which Run waits for, and those it makes
	// for others, by the host whose robots.txt they are for.
	hopCtx     context.Context
	hopWG      sync.WaitGroup
	hopWaiters sync.Map // host -> chan RobotsAnswer
	// inlinks counts the in-links of every URL, in continuous mode (nil
	// otherwise).
	inlinks *sketch.Sketch
	// handlers read responses by media type; embeds says one of them
	// wants the images pages show.
	handlers content.Set
	embeds   bool
	recent   *hostMap[nearWindow]
	// policyRefused holds the hosts whose policy delay was refused, said
	// once in the log.
	policyRefused sync.Map
	stats         *counters
	flog          *fetchLog
	start         time.Time
	seeds         []canon.URL
	resumed       bool
	warcFix       []warc.RecoveredFile
	uploads       *uploader     // finished WARC files on their way to Config.Objects; nil without
	outboxSeq     atomic.Uint64 // names of page events in the outbox (sink.go)

	pagesStarted  atomic.Int64
	capReached    atomic.Bool
	stopLeasing   context.CancelFunc // set by Run
	failed        atomic.Bool        // fail was called
	stoppedByHook atomic.Bool        // a hook gave up, its process stopping (ErrStopping)
	endedDrained  atomic.Bool        // EndDrained: a cluster found the whole crawl done
	fatalOnce     sync.Once
	fatalMu       sync.Mutex // fatal is set by fail from any goroutine, the API's too
	fatal         error      // first error that stops the crawl (set once, read after workers exit)
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
	}
	if c.token == "" {
		return nil, fmt.Errorf("crawl: user agent %q has no product token for robots.txt", cfg.UserAgent)
	}
	if len(cfg.Seeds) == 0 {
		return nil, errors.New("crawl: no seeds")
	}
	if c.scope, err = scope.New(cfg.Scope); err != nil {
		return nil, err
	}
	for _, s := range cfg.Seeds {
		u, err := c.canon.Parse(s)
		if err != nil {
			return nil, fmt.Errorf("crawl: seed %q: %w", s, err)
		}
		if u.Scheme != "http" && u.Scheme != "https" {
			return nil, fmt.Errorf("crawl: seed %q: scheme %q is not http or https", s, u.Scheme)
		}
		c.scope.AddSeed(u)
		c.seeds = append(c.seeds, u)
	}

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
	if c.state, c.resumed, err = openDurable(cfg.DataDir, cfg.Partitions, cfg.Fresh, cfg.StoreFS); err != nil {
		return nil, err
	}
	closers = append(closers, c.state.close)
	// The partition count is the stored crawl's, fixed when it was created.
	c.cfg.Partitions = c.state.parts
	c.partHeld = make([]atomic.Bool, c.cfg.Partitions)
	c.robots = newRobotsCache(c.cfg.Partitions, c.cfg.robotsRetry())
	if c.cfg.Policies == nil {
		// Empty, for the operator API to fill.
		c.cfg.Policies = policy.NewSet(c.policyLimits())
	}
	if err := c.loadPolicies(); err != nil {
		return nil, err
	}
	all := c.cfg.Policies.All()
	for _, host := range slices.Sorted(maps.Keys(all)) {
		p := all[host]
		c.log.Info("operator policy", "host", host, "delay", time.Duration(p.Delay), "disallow", p.Disallow, "max_urls", p.MaxURLs)
	}
	c.hostCap = newHostMap[int64](c.cfg.Partitions)
	c.priors = newHostPriors(c.state.db, c.cfg.Partitions)
	c.aliases = newHostMap[aliasState](c.cfg.Partitions)
	c.traps = newTrapCounts(c.cfg.ExpectedURLs, max(c.cfg.MaxURLsPerPattern, 0))
	c.handlers = slices.Clone(c.cfg.Handlers)
	if c.handlers == nil {
		c.handlers = content.Default()
	}
	if !c.cfg.NoSitemaps {
		c.handlers = append(c.handlers, content.Sitemap{})
	}
	if c.cfg.WithImages {
		c.handlers = append(c.handlers, content.Image{})
	}
	c.embeds = c.handlers.WantsEmbeds()
	c.recent = newHostMap[nearWindow](c.cfg.Partitions)
	if c.resumed && c.cfg.NearDupThreshold >= 0 && c.cfg.NearDupTrapWindow >= 0 {
		if err := c.loadTraps(); err != nil {
			return nil, err
		}
	}
	if c.cfg.NearDupThreshold >= 0 {
		c.near = newNearIndex(c.cfg.NearDupThreshold, c.cfg.NearDupMaxPages, c.state.db)
		if c.resumed {
			n, err := c.near.restore()
			if err != nil {
				return nil, fmt.Errorf("crawl: read the fingerprints of an earlier run: %w", err)
			}
			c.log.Info("near-duplicate index rebuilt", "pages", n)
		}
	}
	if cfg.Recrawl != nil && c.cfg.InLinkBytes > 0 {
		if err := c.loadInLinks(); err != nil {
			return nil, err
		}
	}
	if err := c.prepareDueIndex(); err != nil { // after the in-link counts: they weigh in
		return nil, err
	}
	c.state.forward = cfg.Forward
	if c.seen, err = seen.New(seen.Config{ExpectedURLs: cfg.ExpectedURLs, Partitions: c.cfg.Partitions}, c.state); err != nil {
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
		Store: frontStore{c.state}, FirstSeq: c.state.firstSeq,
	}
	if c.cfg.IPGroup != IPGroupOff {
		fcfg.IPGap = c.cfg.IPGap
	}
	if c.resumed {
		fcfg.Resumed = time.Now()
	}
	if c.front, err = frontier.New(fcfg); err != nil {
		return nil, err
	}
	if c.fetcher, err = fetch.New(cfg.Fetch); err != nil {
		return nil, err
	}
	closers = append(closers, func() error { c.fetcher.Close(); return nil })
	if c.warc = cfg.Archive; c.warc == nil {
		if err := os.MkdirAll(cfg.warcDir(), 0o755); err != nil {
			return nil, fmt.Errorf("crawl: WARC directory: %w", err)
		}
		if c.warcFix, err = warc.Recover(cfg.warcDir()); err != nil {
			return nil, err
		}
		wcfg := warc.Config{Dir: cfg.warcDir(), MaxFileSize: cfg.WARCMaxFileSize, Software: cfg.UserAgent}
		if cfg.Objects != nil {
			if err := c.startUploads(); err != nil {
				return nil, err
			}
			closers = append(closers, func() error { c.uploads.close(0); return nil })
			wcfg.OnFinish = c.uploads.add
		}
		if c.warc, err = warc.NewWriter(wcfg); err != nil {
			return nil, err
		}
	}
	closers = append(closers, c.warc.Close)
	if c.flog, err = openFetchLog(filepath.Join(cfg.DataDir, "fetches.jsonl")); err != nil {
		return nil, err
	}
	return c, nil
}

// Run crawls until the frontier drains, MaxPages is reached or ctx is
// done, then closes the output and returns what it did. When ctx is done,
// no new lease is taken and the fetches in flight get Config.Grace to
// finish before they are cut; the summary then says "interrupted", which is
// not an error.
func (c *Crawler) Run(ctx context.Context) (Summary, error) {
	for _, f := range c.warcFix {
		c.log.Warn("torn WARC file from a crash cut back to its last whole record", "file", f.Name, "records", f.Records, "dropped_bytes", f.DroppedBytes, "removed", f.Removed)
	}
	// leaseCtx stops the workers taking leases (ctx done, page cap, a fatal
	// error, which may come as early as the seeds or the seen set's
	// rebuild).
	leaseCtx, stopLeasing := context.WithCancel(ctx)
	defer stopLeasing()
	c.stopLeasing = stopLeasing
	var warm sync.WaitGroup
	warmCtx, stopWarm := context.WithCancel(ctx)
	c.hopCtx = warmCtx         // ends as the crawl closes: hops asked of other nodes stop waiting
	closeAll := func() error { // the rebuild of the seen set reads the store
		stopWarm()
		warm.Wait()
		c.hopWG.Wait()
		c.liveMu.Lock()
		c.running, c.closed = false, true // the API reads and writes no more
		c.liveMu.Unlock()
		return c.close(uploadDrain)
	}
	if err := c.replayOutbox(); err != nil {
		return Summary{StoppedBy: "failed"}, errors.Join(err, closeAll())
	}
	if c.resumed {
		extra, err := c.state.scopeSeeds()
		if err != nil {
			return Summary{StoppedBy: "failed"}, errors.Join(err, closeAll())
		}
		for _, s := range extra {
			if u, err := c.canon.Parse(s); err == nil {
				c.scope.AddSeed(u)
			}
		}
		// The crawl goes on at once: the queues are read from disk as
		// they are needed, and the seen set, whose filters are rebuilt in
		// the background, asks the store about every URL meanwhile.
		c.seen.StartWarming()
		warm.Go(func() {
			urls, err := c.state.fillSeen(warmCtx, c.seen)
			c.stats.resumedURLs.Store(int64(urls))
			switch {
			case err == nil:
				c.seen.StopWarming()
				c.log.Info("seen set rebuilt", "urls", urls)
			case warmCtx.Err() == nil:
				c.fail(err)
			}
		})
		c.log.Info("resuming crawl", "dir", c.cfg.DataDir)
	}
	// Seeds given again to a resumed crawl are deduplicated like any URL.
	seeds := c.state.newBatch()
	for _, u := range c.seeds {
		c.admitURL(seeds, u, 0, 0, frontier.High, "")
	}
	if err := seeds.commit(c.seen, c.front); errors.Is(err, ErrStopping) {
		return Summary{StoppedBy: "stopped"}, closeAll() // before it began: the seeds are offered again next run
	} else if err != nil {
		return Summary{StoppedBy: "failed"}, errors.Join(fmt.Errorf("crawl: record seeds: %w", err), closeAll())
	}
	c.setRunning(true)

	// fetchCtx, which the fetches use, ends Grace after ctx.
	fetchCtx, cutFetches := context.WithCancel(context.WithoutCancel(ctx))
	defer cutFetches()
	var grace *time.Timer
	var graceMu sync.Mutex
	stopGrace := context.AfterFunc(ctx, func() {
		graceMu.Lock()
		grace = time.AfterFunc(c.cfg.Grace, cutFetches)
		graceMu.Unlock()
	})
	defer func() {
		stopGrace()
		graceMu.Lock()
		if grace != nil {
			grace.Stop()
		}
		graceMu.Unlock()
	}()
	frontErr := make(chan error, 1)
	c.liveMu.Lock()
	c.frontUp = true // the frontier answers Stats, Host and Hosts from now on
	c.liveMu.Unlock()
	go func() { frontErr <- c.front.Run(leaseCtx) }()
	var rescan sync.WaitGroup
	if c.cfg.Recrawl != nil {
		rescan.Go(func() { c.rescan(leaseCtx) })
	}
	rescan.Go(func() { c.sweepExternal(leaseCtx, 250*time.Millisecond) })

	var wg sync.WaitGroup
	for range c.cfg.Workers {
		wg.Go(func() { c.work(fetchCtx, leaseCtx) })
	}
	wg.Wait()
	stats := c.front.Stats()
	stopLeasing()
	rescan.Wait()
	ferr := <-frontErr
	if ferr != nil && !errors.Is(ferr, context.Canceled) && !errors.Is(ferr, context.DeadlineExceeded) {
		c.fail(ferr) // the queues could not be read or written
	}
	stopWarm()
	warm.Wait()
	c.stats.resumedQueue.Store(int64(stats.Earlier))

	sum := c.summary()
	sum.Queued = stats.Queued + stats.InFlight
	switch {
	case c.fatalErr() != nil:
		sum.StoppedBy = "failed"
	case c.endedDrained.Load():
		sum.StoppedBy = "drained"
	case ctx.Err() != nil:
		sum.StoppedBy = "interrupted"
	case c.stoppedByHook.Load():
		sum.StoppedBy = "stopped"
	case c.capReached.Load():
		sum.StoppedBy = "max-pages"
	case ferr == nil:
		sum.StoppedBy = "drained"
	default:
		sum.StoppedBy = "stopped"
	}
	err := errors.Join(c.fatalErr(), closeAll())
	sum.WARCFiles = c.warc.Files()
	sum.WARCBytes = c.warc.Bytes()
	sum.WARCUploads = c.uploads.summary() // after the close, which uploads the last file
	return sum, err
}

// Resumed reports whether New found a crawl under DataDir to continue.
func (c *Crawler) Resumed() bool { return c.resumed }

// Progress is safe to call while Run runs.
func (c *Crawler) Progress() Progress {
	fs := c.front.Stats()
	return Progress{
		Elapsed:      time.Since(c.start),
		Pages:        c.stats.pages.Load(),
		Errors:       c.stats.errors.Load(),
		Queued:       fs.Queued,
		InFlight:     fs.InFlight,
		HostsReady:   fs.ReadyHosts,
		HostsWaiting: fs.WaitingHost,
	}
}

// close closes what New opened, waiting up to drain for the WARC files
// still to upload (those left stay on disk for the next start).
func (c *Crawler) close(drain time.Duration) error {
	c.fetcher.Close()
	errs := []error{c.saveInLinks(), c.warc.Close()}
	if c.uploads != nil {
		// After the WARC writer's Close, which finishes and queues the
		// last file; before the store's, which records each upload.
		c.uploads.close(drain)
	}
	return errors.Join(append(errs, c.flog.close(), c.state.close())...)
}

func (c *Crawler) summary() Summary {
	s := c.stats
	s.mu.Lock()
	defer s.mu.Unlock()
	sum := Summary{
		Elapsed:        time.Since(c.start),
		Pages:          s.pages.Load(),
		RobotsFetches:  s.robots.Load(),
		Bytes:          s.bytes.Load(),
		Truncated:      s.truncated.Load(),
		Revisits:       s.revisits.Load(),
		NearDups:       s.nearDups.Load(),
		NotModified:    s.notModified.Load(),
		Recrawls:       s.recrawls.Load(),
		ListedChanged:  s.listedChanged.Load(),
		ListedDropped:  s.listedDropped.Load(),
		RevisitBytes:   s.revisitBytes.Load(),
		OverDecodeCap:  s.overDecode.Load(),
		Binary:         s.binary.Load(),
		Charsets:       clone(s.charsets),
		RedirectSeen:   s.redirectSeen.Load(),
		Forwarded:      s.forwarded.Load(),
		RobotsCut:      s.robotsCut.Load(),
		BadEncoding:    s.badCoding.Load(),
		ByStatus:       clone(s.byClass),
		Errors:         clone(s.byError),
		Rejected:       clone(s.rejected),
		Handled:        clone(s.handled),
		Unreadable:     clone(s.unreadable),
		Cut:            clone(s.cut),
		Robots:         clone(s.robotsOutc),
		RobotsHops:     s.robotsHops.Load(),
		RobotsRetries:  s.robotsRetries.Load(),
		RobotsLastGood: s.robotsLastGood.Load(),
		Policies:       c.cfg.Policies.Len(),
		HostsDown:      clone(s.hostsDown),
		NoIndex:        s.noindex.Load(),
		NoFollow:       s.nofollow.Load(),
		Throttled:      s.throttled.Load(),
		Unavailable:    s.unavailable.Load(),
		Strained:       s.strained.Load(),
		Parks:          s.parks.Load(),
		SeenFalsePos:   c.seen.Stats().FalsePositives,
		Resumed:        c.resumed,
		ResumedURLs:    s.resumedURLs.Load(),
		ResumedQueue:   s.resumedQueue.Load(),
		WARCRecovered:  len(c.warcFix),
		WARCUploads:    c.uploads.summary(), // so far
	}
	var top []HostPages
	sum.LinksCut, top = s.topLinksCut(maxHostNames)
	if len(top) > 0 {
		sum.LinksCutHosts = make(map[string]int64, len(top))
		for _, h := range top {
			sum.LinksCutHosts[h.Host] = h.Pages
		}
	}
	sum.GaveUp, sum.GaveUpHosts = s.gaveUp.snapshot()
	sum.Traps, sum.TrapHosts = s.traps.snapshot()
	sum.TrapCosts, sum.TrapHostCount = c.traps.report()
	return sum
}

func clone(m map[string]int64) map[string]int64 {
	out := make(map[string]int64, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// work leases URLs until the frontier drains or leasing stops. Every lease
// is completed, whatever happens to its fetch.
func (c *Crawler) work(ctx, leaseCtx context.Context) {
	for {
		if err := c.pause.wait(leaseCtx); err != nil {
			return
		}
		l, err := c.front.Next(leaseCtx)
		if err != nil {
			return
		}
		// Paused while waiting for the lease: it goes back unfetched, first
		// in its host's queue, the host's clock as it was.
		if c.pause.paused() {
			c.front.Complete(l, frontier.Result{Retry: true})
			continue
		}
		hctx, cancel := ctx, context.CancelFunc(func() {})
		if c.cfg.Claim != nil {
			until, ok := c.cfg.Claim(l.Host)
			if !ok {
				// The node no longer owns the host (its partition is
				// about to be held): the URL goes back unfetched, for the
				// day it does again, and the host waits a moment rather
				// than come straight back to the workers.
				c.front.Complete(l, frontier.Result{Retry: true, Hold: time.Second})
				continue
			}
			hctx, cancel = context.WithDeadline(ctx, until)
		}
		pb := c.state.newBatch()
		if r, ok := c.visitedElsewhere(l); ok {
			c.finish(l, c.elsewhere(l, r), pb)
		} else {
			c.finish(l, c.handle(hctx, l, pb), pb)
		}
		cancel()
	}
}

// Visited is what a node of a cluster tells the others of a URL it fetched
// (Config.Fetched), and what the URL's next owner takes on (Adopt): its
// record after the fetch, with the importance its next crawl was scheduled
// with.
type Visited struct {
	URL        string
	Record     store.URLRecord
	Importance float64 `json:",omitempty"`
	// First is the capture that holds the URL's payload (see visit.first),
	// when the visit made or referred to one.
	First *store.DigestRecord `json:",omitempty"`
}

// Adopt takes visits other nodes made over (a partition taken over): each
// URL's record becomes the visit's, unless this crawl's own is as new, and
// the URL counts as seen, so that the partition's URLs replayed next are
// not queued again for it. In continuous mode the URL is scheduled at the
// visit's next crawl, and the record of the capture that holds its payload
// is kept, so that the next request is conditional and a 304 a revisit of
// that capture. A URL queued here (from an earlier ownership) keeps its
// place; its lease finds the newer visit and counts it (visitedElsewhere).
// The adopted records live in the store, not in memory. Like Offer, it
// answers ErrNotRunning outside Run.
func (c *Crawler) Adopt(vs []Visited) error {
	c.liveMu.RLock()
	defer c.liveMu.RUnlock()
	if !c.running {
		return ErrNotRunning
	}
	ab := c.state.newBatch()
	for _, v := range vs {
		u, err := c.canon.Parse(v.URL)
		if err != nil || u.String != v.URL {
			continue // not a canonical URL this crawl would have logged
		}
		host := u.Authority
		part := partition.Of(host, c.cfg.Partitions)
		k := seen.KeyOf(v.URL)
		r := v.Record
		r.URL = v.URL
		r.Status = store.URLDone
		if r.LastStatus == 0 {
			r.Status = store.URLFailed
		}
		isNew, err := c.seen.Add(host, v.URL, func(part int, k seen.Key) (bool, error) {
			ab.b.PutURL(uint16(part), host, k, r)
			ab.pending = append(ab.pending, seen.Pending{Partition: part, Key: k})
			return true, nil
		})
		if err != nil {
			ab.b.Close()
			return err
		}
		var prevDue time.Time
		if !isNew {
			prev, ok, err := c.state.db.GetURL(uint16(part), host, k)
			if err != nil {
				ab.b.Close()
				return fmt.Errorf("crawl: read %s to adopt a visit: %w", v.URL, err)
			}
			if ok && !prev.LastFetch.Before(r.LastFetch) {
				continue // this crawl's own record is as new
			}
			prevDue = scheduled(prev)
			if ok && prev.Status == store.URLQueued {
				r.Status = store.URLQueued // in this crawl's queues: its lease will count the visit
			}
			ab.b.PutURL(uint16(part), host, k, r)
		}
		if c.cfg.Recrawl == nil {
			continue
		}
		if !prevDue.IsZero() {
			ab.b.DeleteDue(uint16(part), prevDue, host, k)
		}
		if r.Status != store.URLQueued && !r.NextCrawl.IsZero() {
			ab.b.PutDue(dueEntry(uint16(part), host, k, r, v.Importance))
		}
		if v.First != nil && r.Digest != ([sha1.Size]byte{}) {
			if _, known, err := c.state.db.GetDigest(r.Digest); err == nil && !known {
				ab.b.PutDigest(r.Digest, *v.First)
			}
		}
	}
	if err := ab.commit(c.seen, c.front); err != nil {
		return fmt.Errorf("crawl: adopt %d visits: %w", len(vs), err)
	}
	return nil
}

// visitedElsewhere reads, in a cluster (Config.SharedVisits), the record
// of a page about to be fetched: a visit another node made since the URL
// was queued here (Adopt) that is not due again counts as done.
func (c *Crawler) visitedElsewhere(l frontier.Lease) (store.URLRecord, bool) {
	if !c.cfg.SharedVisits || l.RobotsFor != "" || l.Seq == 0 {
		return store.URLRecord{}, false
	}
	part := partition.Of(l.Host, c.cfg.Partitions)
	r, ok, err := c.state.db.GetURL(uint16(part), l.Host, seen.KeyOf(l.URL))
	if err != nil || !ok || r.LastFetch.IsZero() || !r.LastFetch.After(l.Added) {
		return store.URLRecord{}, false
	}
	due := !r.NextCrawl.IsZero() && !r.NextCrawl.After(time.Now())
	return r, !due
}

// elsewhere is the outcome of a lease whose URL another node fetched: no
// request, the host's clock untouched, and the URL's record that node's,
// so that in continuous mode its next crawl is the one that node learnt.
func (c *Crawler) elsewhere(l frontier.Lease, r store.URLRecord) leaseOutcome {
	vis := &visit{rec: r, adopted: true}
	if c.cfg.Recrawl != nil {
		vis.importance = c.importance(l.URL, &vis.rec)
	}
	return leaseOutcome{outcome: "elsewhere", status: r.LastStatus, visit: vis}
}

// finish ends a lease: everything it changed goes to disk in one batch
// before the frontier hears of it (the links it found, its outcome, its
// host's clock). If the write fails the crawl stops, and the URL stays
// queued on disk.
func (c *Crawler) finish(l frontier.Lease, lo leaseOutcome, pb *pageBatch) {
	part := partition.Of(l.Host, c.cfg.Partitions)
	if c.failed.Load() {
		// The crawl is stopping on an error that may have cost this
		// lease something (a link not admitted, a record not
		// archived): keep its URL queued for the next run.
		lo.res.Retry = true
	}
	lo.res = c.policyDelay(l, lo.res)
	// The host's new clock is computed here, from the lease's, so that
	// the one the frontier installs is the one on disk.
	now := time.Now()
	clock := c.front.Advance(l.Clock, lo.res, now)
	lo.res.Clock = &clock
	c.countClock(l, lo.res, clock)
	var keep *frontier.Clock // written only when a restart would not assume as much
	if c.front.Durable(l.Clock, clock, now) {
		keep = &clock
	}
	if c.cfg.Recrawl != nil && !lo.res.Retry && l.Seq != 0 {
		if lo.visit == nil {
			lo.visit = c.keepVisit(l)
		}
		c.recrawling.done(l.URL)
	}
	rec := pb.done(l, part, lo.res, lo.status, lo.outcome, keep, lo.visit)
	outbox := c.stageEvents(pb.b, pb.captures)
	if err := pb.commit(c.seen, c.front); errors.Is(err, ErrStopping) {
		// Nothing of the page is on disk: its URL stays queued there.
		c.log.Warn("crawl: a page not recorded, its process stopping; it is fetched again in the next run", "url", l.URL, "err", err)
		c.stoppedByHook.Store(true)
		c.stopLeasing()
		lo.res.Retry = true // queued, as on disk
	} else if err != nil {
		c.fail(fmt.Errorf("crawl: record %s: %w", l.URL, err))
	} else {
		c.emit(pb.captures, outbox)
		if c.cfg.Clocked != nil && keep != nil {
			c.cfg.Clocked(l.Host, *keep)
		}
		if c.cfg.Fetched != nil && !lo.res.Retry && l.RobotsFor == "" && lo.res.Fetched && !requeued(pb, l.URL) {
			v := Visited{URL: l.URL, Record: rec}
			if lo.visit != nil {
				v.Importance = lo.visit.importance
				if lo.visit.first.RecordID != "" {
					v.First = &lo.visit.first
				}
			}
			c.cfg.Fetched(v, l.Host)
		}
	}
	c.digests.settle(pb.digests)
	if c.near != nil {
		c.near.settle(pb.sims)
	}
	c.front.Complete(l, lo.res)
}

// policyDelay folds the delay of the host's policy into the Crawl-delay its
// clock keeps, so that its gap, max(--delay, Crawl-delay, backoff), is at
// least the policy's. A robots.txt Crawl-delay longer than the policy's
// delay wins: the policy asked for weft to be faster than robots.txt, which
// is refused, and said once in the log.
func (c *Crawler) policyDelay(l frontier.Lease, res frontier.Result) frontier.Result {
	p := c.cfg.Policies.ForAuthority(l.Host)
	if p == nil || p.Delay <= 0 {
		return res
	}
	d := time.Duration(p.Delay)
	robotsDelay := l.Clock.CrawlDelay
	if res.SetCrawlDelay {
		robotsDelay = res.CrawlDelay
		if robotsDelay > d {
			if _, told := c.policyRefused.LoadOrStore(l.Host, true); !told {
				c.log.Warn("policy refused: its delay is shorter than the host's robots.txt Crawl-delay, which weft keeps",
					"host", l.Host, "policy_delay", d, "crawl_delay", robotsDelay)
			}
		}
	}
	res.SetCrawlDelay, res.CrawlDelay = true, max(robotsDelay, d)
	return res
}

// leaseOutcome is what handling a lease did.
type leaseOutcome struct {
	res     frontier.Result
	status  int    // HTTP status of the page, 0 if none
	outcome string // "ok", "redirect", "error:<kind>", "robots", ...
	// visit is, in continuous mode, what the fetch taught about the URL
	// (validators, digest, change history, next crawl), for its record.
	visit *visit
}

// countClock counts what a lease's result did to its host's clock.
func (c *Crawler) countClock(l frontier.Lease, res frontier.Result, clock frontier.Clock) {
	if !res.Fetched {
		return
	}
	switch res.Signal {
	case frontier.Throttled:
		c.stats.throttled.Add(1)
	case frontier.Unavailable:
		c.stats.unavailable.Add(1)
	case frontier.Strained:
		c.stats.strained.Add(1)
	}
	if clock.Parks > l.Clock.Parks {
		c.stats.parks.Add(1)
		c.log.Warn("host parked after failures in a row", "host", l.Host, "errors", clock.Errors, "until", clock.NextAt.Format(time.RFC3339))
	}
	if clock.GaveUp && !l.Clock.GaveUp {
		c.stats.gaveUp.add(l.Host)
		c.log.Warn("host given up after too many failures, or 429s in a row; its queued URLs are dropped", "host", l.Host, "errors", clock.Errors, "429s_in_a_row", clock.Throttles)
	}
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

// handle does one lease's request (robots.txt or the page) and returns how
// the host's clock should move. A panic while handling one URL (a parser
// bug on hostile input) fails that URL, is counted and logged, and the
// crawl goes on.
func (c *Crawler) handle(ctx context.Context, l frontier.Lease, pb *pageBatch) (lo leaseOutcome) {
	defer func() {
		if r := recover(); r != nil {
			c.stats.errors.Add(1)
			c.stats.inc(c.stats.byError, "panic", 1)
			c.log.Error("panic while handling a URL", "url", l.URL, "host", l.Host, "err", fmt.Sprint(r), "stack", string(debug.Stack()))
			// Assume the request went out: better a longer gap than a
			// burst. A robots.txt hop must not leave its owner parked.
			lo = leaseOutcome{res: frontier.Result{Fetched: true}, outcome: "error:panic"}
			if l.RobotsFor != "" {
				c.front.Unpark(originHost(l.RobotsFor))
			}
		}
	}()
	if l.Mode == frontier.ModeGiveUp {
		// The host failed too often: drop the URL without a request. A
		// robots.txt hop owned by another host leaves it with no rules it
		// can read, which is "unreachable".
		c.stats.reject(RejectGaveUp)
		if l.RobotsFor != "" {
			owner := c.robots.entry(l.RobotsFor)
			c.decideRobots(l.RobotsFor, owner, robots.DisallowAllPolicy(0, "robots.txt redirects to "+l.Host+", which was given up", time.Now()), "redirect-gave-up", nil, true)
			c.front.Unpark(originHost(l.RobotsFor))
		}
		return leaseOutcome{outcome: RejectGaveUp}
	}
	u, err := c.canon.Parse(l.URL)
	if err != nil { // cannot happen for a URL we canonicalised; never crash on it
		c.log.Error("queued URL does not parse", "url", l.URL, "err", err)
		if l.RobotsFor != "" {
			c.front.Unpark(originHost(l.RobotsFor))
		}
		return leaseOutcome{outcome: RejectInvalid}
	}
	switch l.Mode {
	case frontier.ModeFindGroup:
		return leaseOutcome{res: c.groupOf(ctx, u.Host)}
	case frontier.ModeDrain:
		// The host drains without its clock: its URLs are dropped, never
		// requested. If its robots.txt is no longer known to forbid this
		// one (the answer expired, or it is a hop to the host's own
		// robots.txt), the host goes back to its clock.
		pol := c.robots.cached(originKey(u.Scheme, l.Host), time.Now())
		if pol == nil || pol.Allowed(u.PathQuery()) || (l.RobotsFor != "" && u.Path == "/robots.txt") {
			return leaseOutcome{res: frontier.Result{Retry: true, Drain: frontier.DrainStop}}
		}
		if l.RobotsFor != "" { // another host's robots.txt hop, disallowed here
			return leaseOutcome{res: c.robotsHop(ctx, l, u, pol)}
		}
		c.stats.reject(RejectRobots)
		return leaseOutcome{res: frontier.Result{Drain: frontier.DrainStart}, outcome: RejectRobots}
	}
	if l.RobotsFor != "" && u.Path == "/robots.txt" {
		// Another host's robots.txt redirected to this host's robots.txt,
		// which needs no permission from this host's rules.
		return leaseOutcome{res: c.robotsHop(ctx, l, u, c.robots.cached(originKey(u.Scheme, l.Host), time.Now()))}
	}
	pol, spent := c.ensureRobots(ctx, l, u)
	if pol == nil {
		if spent.SetCrawlDelay && spent.Drain == 0 {
			// The lease fetched the host's robots.txt, which allows it:
			// its sitemaps are queued like any URL.
			c.admitSitemaps(pb, l, u)
		}
		return leaseOutcome{res: spent} // the lease went to robots.txt; the URL is retried
	}
	if l.RobotsFor != "" {
		return leaseOutcome{res: c.robotsHop(ctx, l, u, pol)}
	}
	res := frontier.Result{SetCrawlDelay: true, CrawlDelay: pol.CrawlDelay}
	if !pol.Allowed(u.PathQuery()) {
		c.stats.reject(RejectRobots)
		if pol.Outcome == robots.DisallowAll {
			// Nothing queued for the host will be requested: drop the
			// rest at once rather than one per gap.
			res.Drain = frontier.DrainStart
		}
		return leaseOutcome{res: res, outcome: RejectRobots}
	}
	if !c.cfg.Policies.For(u.Authority, u.Host).Allowed(u.PathQuery()) {
		// Queued before the policy said so (an earlier run, or a change
		// while the crawl runs): dropped now, unrequested.
		c.stats.reject(RejectPolicy)
		return leaseOutcome{res: res, outcome: RejectPolicy}
	}
	if max := c.cfg.MaxPages; max > 0 && c.pagesStarted.Add(1) > max {
		c.capReached.Store(true)
		c.stopLeasing()
		res.Retry = true // not fetched: it stays queued for a later run
		return leaseOutcome{res: res}
	}
	lo = c.fetchPage(ctx, l, u, pb)
	lo.res.SetCrawlDelay, lo.res.CrawlDelay = true, pol.CrawlDelay
	return lo
}

// fetchPage fetches, archives and parses one page and admits its links.
// Its result arms the host's clock only if a request reached the host (not
// when it was refused or never resolved), and retries the URL if the fetch
// was cut by shutdown (it stays queued for the next run).
func (c *Crawler) fetchPage(ctx context.Context, l frontier.Lease, u canon.URL, pb *pageBatch) leaseOutcome {
	target := l.URL
	if l.Fetch != "" {
		target = l.Fetch
	}
	start := time.Now()
	if !l.Added.IsZero() {
		c.stats.queueDelay.observe(start.Sub(l.Added))
	}
	var prev store.URLRecord
	var first store.DigestRecord
	var hdr http.Header
	if c.cfg.Recrawl != nil {
		prev, first, hdr = c.previousVisit(l)
	}
	c.traps.fetched(l.Host)
	resp, err := c.fetcher.Get(ctx, target, hdr)
	if err != nil {
		kind := fetch.KindOf(err)
		if kind == fetch.KindCanceled && ctx.Err() != nil {
			// Cut by shutdown: not the host's fault, not counted, and not
			// done: the URL stays queued.
			return leaseOutcome{res: frontier.Result{Fetched: true, Retry: true}}
		}
		c.stats.errors.Add(1)
		c.stats.inc(c.stats.byError, kind.String(), 1)
		c.log.Info("fetch failed", "url", l.URL, "host", l.Host, "err", err)
		c.flog.write(fetchRecord{Time: time.Now(), URL: l.URL, Host: l.Host, Depth: l.Depth, Hops: l.Hops, Via: l.Via, Outcome: "error:" + kind.String(), Error: err.Error()})
		fetched, signal := errorSignal(kind)
		return leaseOutcome{res: frontier.Result{Fetched: fetched, Signal: signal, Took: time.Since(start)}, outcome: "error:" + kind.String()}
	}
	c.stats.pages.Add(1)
	c.stats.bytes.Add(int64(len(resp.Body)))
	c.stats.inc(c.stats.byClass, statusClass(resp.StatusCode), 1)
	c.stats.fetchTime.observe(resp.Duration)
	if l.Priority == frontier.High {
		c.stats.lastHigh.Store(resp.Start.UnixNano())
	}
	if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500 {
		c.stats.hostErrors.update(l.Host, func(v [2]int64) [2]int64 {
			if resp.StatusCode == http.StatusTooManyRequests {
				v[0]++
			} else {
				v[1]++
			}
			return v
		})
	}
	if resp.Truncated != "" {
		c.stats.truncated.Add(1)
		c.log.Info("body truncated", "url", l.URL, "host", l.Host, "reason", resp.Truncated, "bytes", len(resp.Body))
	}
	if resp.DecodeErr != nil {
		if errors.Is(resp.DecodeErr, fetch.ErrDecodedTooLarge) {
			c.stats.overDecode.Add(1)
		} else {
			c.stats.badCoding.Add(1)
		}
		c.log.Info("body not decoded whole", "url", l.URL, "host", l.Host, "err", resp.DecodeErr)
	}
	var cp capture
	notModified := resp.StatusCode == http.StatusNotModified && hdr != nil
	if notModified {
		cp = c.archiveNotModified(resp, prev, first, &u)
	} else {
		cp = c.archive(resp, pb, &u)
		c.learnAlias(u, resp, cp)
	}
	// Its line of the capture index is staged whatever happens next, a
	// panic while reading it included (handle recovers it and the batch
	// commits): the record is in the WARC file already. Reading may add to
	// the line (its SimHash), so it is staged last.
	defer func() { c.index(cp, pb) }()
	loc := cp.loc
	sum := sha256.Sum256(resp.Decoded)
	rec := fetchRecord{
		Time: resp.Start, URL: l.URL, Host: l.Host, Status: resp.StatusCode, Bytes: len(resp.Body),
		DurationMS: resp.Duration.Milliseconds(), Depth: l.Depth, Hops: l.Hops, Via: l.Via,
		ContentType: resp.Header.Get("Content-Type"), SHA256: hex.EncodeToString(sum[:]),
		Truncated: resp.Truncated, WARCFile: loc.File, WARCOffset: loc.Offset, Outcome: "ok",
	}

	// The handler of the response's media type, if any, reads it.
	mt := mediaType(resp)
	handler := c.handlers.For(mt)
	switch {
	case notModified:
		// Unchanged since the last visit, which was parsed then.
		rec.Outcome = "not-modified"
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		rec.Outcome = "redirect"
		if resp.Location != "" {
			rec.Location = resp.Location
			c.admitRedirect(pb, l, resp.Location)
		}
	case cp.skipLinks(l.Depth):
		// The payload is an earlier capture's, whose links were followed
		// then: they are not extracted again (Mercator's "content seen").
		rec.Outcome = "revisit"
	case resp.StatusCode >= 200 && resp.StatusCode < 300 && handler != nil:
		// A page's links count toward their targets' in-links once: at
		// the first fetch that reads it whole (none has left a payload
		// digest). A page always cut short never counts.
		first := c.inlinks != nil && prev.Digest == ([sha1.Size]byte{}) && resp.Truncated == ""
		outlinks, followed := c.readAndAdmit(pb, l, u, resp, handler, mt, &rec, &cp.rec, first)
		c.archiveOutlinks(resp, cp.loc.RecordID, l, outlinks)
		if followed {
			c.followed(pb, cp, l.Depth)
		}
		if cp.revisit {
			rec.Outcome = "revisit"
		}
	}
	c.flog.write(rec)
	signal, retryAfter := answerSignal(resp, time.Now())
	res := frontier.Result{Fetched: true, Signal: signal, RetryAfter: retryAfter, Took: resp.Duration}
	if signal == frontier.Throttled || signal == frontier.Unavailable {
		// The server asked to come back later: the URL stays queued,
		// first on its host, for when the host's clock allows. A 503 counts
		// toward giving the host up, and so do 429s in a row over
		// MaxBackoff, so that a storm of either does not last for ever.
		res.Retry = true
	}
	lo := leaseOutcome{res: res, status: resp.StatusCode, outcome: rec.Outcome}
	if c.cfg.Recrawl != nil && !res.Retry {
		lo.visit = c.learn(l, prev, resp, cp, notModified)
	}
	return lo
}

// mediaType is the media type of a response: its Content-Type's, or what
// its body sniffs as when it has none.
func mediaType(resp *fetch.Response) string {
	ct := resp.Header.Get("Content-Type")
	if ct == "" {
		ct = http.DetectContentType(resp.Decoded)
	}
	return mimeType(ct)
}

// readAndAdmit reads a response with its handler and admits the links it
// may follow, resolved against <base href> or the page's own URL, and the
// images it shows when a module fetches them. It returns every link it
// could resolve, followed or not: the page's outlinks.
func (c *Crawler) readAndAdmit(pb *pageBatch, l frontier.Lease, u canon.URL, resp *fetch.Response, h content.Handler, mt string, rec *fetchRecord, capt *store.CaptureRecord, countLinks bool) (outlinks []string, followed bool) {
	res := h.Read(content.Doc{
		MediaType: mt, Header: resp.Header, Body: resp.Decoded, Token: c.token,
		Words: c.near != nil, Embeds: c.embeds, Truncated: resp.Truncated, MaxLinks: c.cfg.MaxLinksPerPage,
	})
	c.stats.inc(c.stats.handled, h.Name(), 1)
	if res.Charset != "" {
		c.stats.inc(c.stats.charsets, res.Charset, 1)
	}
	switch {
	case errors.Is(res.Err, content.ErrBinary):
		// Not a document read in part: one not to read at all.
		c.stats.binary.Add(1)
		c.log.Info("binary body labelled as text, not read", "url", l.URL, "handler", h.Name(), "content_type", resp.Header.Get("Content-Type"))
	case res.Err != nil:
		c.stats.inc(c.stats.unreadable, h.Name(), 1)
		c.log.Warn("document read only in part", "url", l.URL, "handler", h.Name(), "links_read", len(res.Links), "err", res.Err)
	}
	switch {
	case res.Truncated == content.CutLinks:
		// Links past the cap are lost, and a documentation index can
		// have more than any cap: an operator must be able to find the
		// page and raise it.
		c.stats.inc(c.stats.cut, h.Name(), 1)
		c.stats.linksCut.update(l.Host, func(n int64) int64 { return n + 1 })
		c.log.Warn("page cut at the per-page link cap: its later links are not read", "url", l.URL, "host", l.Host, "links", len(res.Links))
	case res.Truncated != "":
		c.stats.inc(c.stats.cut, h.Name(), 1)
		c.log.Info("document cut at a limit", "url", l.URL, "handler", h.Name(), "limit", res.Truncated)
	}
	rec.Links = len(res.Links)
	if res.NoIndex {
		c.stats.noindex.Add(1)
		rec.NoIndex = true
	}
	follow, nearDup := true, false
	if res.NoFollow {
		c.stats.nofollow.Add(1)
		rec.NoFollow = true
		c.stats.inc(c.stats.rejected, RejectNoFollow, int64(len(res.Links)))
		follow = false
	}
	if c.near != nil && len(res.Words) >= c.cfg.NearDupMinWords {
		fp := simhash.Fingerprint(res.Words, simhash.DefaultShingle)
		of, filled, err := c.near.judge(fp, resp.URL, l.Depth, follow, pb)
		if err != nil {
			c.fail(fmt.Errorf("crawl: judge %s for near-duplicates: %w", resp.URL, err))
		}
		if filled {
			c.log.Warn("near-duplicate index full: later pages are judged against the ones it holds, not added", "pages", c.cfg.NearDupMaxPages)
		}
		capt.SimHash, capt.NearDupOf = fp, of
		c.noteJudged(pb, l.Host, of != "")
		if of != "" {
			nearDup = true
			c.stats.nearDups.Add(1)
			rec.NearDupOf = of
			if follow && !c.cfg.NearDupFollow {
				// Its links are mostly those of the page it copies.
				c.stats.inc(c.stats.rejected, RejectNearDup, int64(len(res.Links)))
				follow = false
			}
		}
	}
	// Links resolve against <base href> when the page has a valid one, else
	// against the page's own (final) URL. The base is parsed once per page.
	baseURL := u.String
	if res.Base != "" {
		if b, err := c.canon.Resolve(u, res.Base); err == nil {
			baseURL = b.String
		}
	}
	base, err := c.canon.NewBase(baseURL)
	if err != nil {
		c.log.Info("page URL does not parse as a base", "url", u.String, "err", err)
		return nil, false
	}
	if resp.StatusCode == 200 && dedupable(resp) && resp.URL == u.String {
		pb.page = u.String
	}
	outlinks = make([]string, 0, len(res.Links))
	var votes map[seen.Key]bool // the distinct pages this one links to, for their in-links
	if countLinks && follow {
		votes = make(map[seen.Key]bool, len(res.Links))
	}
	for i, link := range res.Links {
		lu, err := base.Resolve(link.URL)
		if err == nil {
			outlinks = append(outlinks, lu.String)
			if votes != nil && !link.NoFollow && link.Tag != "sitemap" && i >= len(res.Hints) && lu.String != u.String {
				votes[seen.KeyOf(lu.String)] = true // a page's link, not a sitemap's listing: a vote
			}
		}
		switch {
		case !follow:
		case link.NoFollow:
			c.stats.reject(RejectNoFollow)
		case err != nil:
			c.stats.reject(RejectInvalid)
		case link.Tag == "sitemap": // a sitemap index's sitemap
			if it, why := c.judge(pb, lu, l.Depth+1, 0, frontier.Normal, l.URL, asResource); why == "" {
				pb.items = append(pb.items, it)
			}
		case i < len(res.Hints): // a page a sitemap lists
			c.admitListed(pb, lu, l, res.Hints[i])
		default:
			if it, why := c.judge(pb, lu, l.Depth+1, 0, frontier.Normal, l.URL, asPageLink); why == "" {
				pb.items = append(pb.items, it)
			}
		}
	}
	for k := range votes {
		c.inlinks.Add(k)
	}
	// The images a page shows are fetched with it, one hop further (so an
	// image that turns out to be a page is bounded by the depth limit like
	// any link), unless the page is a near-duplicate whose links are not
	// followed either. A nofollow page's images are fetched: nofollow is
	// about links.
	if c.embeds && (!nearDup || c.cfg.NearDupFollow) {
		for _, src := range res.Embeds {
			eu, err := base.Resolve(src)
			if err != nil {
				c.stats.reject(RejectInvalid)
				continue
			}
			outlinks = append(outlinks, eu.String)
			if it, why := c.judge(pb, eu, l.Depth+1, 0, frontier.Normal, l.URL, asResource); why == "" {
				pb.items = append(pb.items, it)
			}
		}
	}
	return outlinks, follow
}

// archiveOutlinks writes a WARC metadata record about a parsed page, as
// Heritrix does: where it was found, how deep, how long it took, and every
// outlink found in it.
func (c *Crawler) archiveOutlinks(resp *fetch.Response, recordID string, l frontier.Lease, outlinks []string) {
	fields := make([][2]string, 0, len(outlinks)+3)
	if l.Via != "" {
		fields = append(fields, [2]string{"via", l.Via})
	}
	fields = append(fields, [2]string{"hopsFromSeed", strconv.Itoa(l.Depth)}, [2]string{"fetchTimeMs", strconv.FormatInt(resp.Duration.Milliseconds(), 10)})
	for _, o := range outlinks {
		fields = append(fields, [2]string{"outlink", o})
	}
	if _, err := c.warc.WriteMetadata(warc.Metadata{URL: resp.URL, Date: resp.Start, ConcurrentTo: recordID, Fields: fields}); err != nil {
		c.fail(fmt.Errorf("crawl: archive the outlinks of %s: %w", resp.URL, err))
	}
}

// admitRedirect admits a redirect target like a link at the same depth,
// one hop further along its chain. A redirect from a seed widens the scope
// to its target, as if the target had been the seed (http to https, a
// domain to its www host). A redirect to a variant of its own canonical URL
// (the server insists on a session id) is requested as written, once more
// within the hop cap, since the seen set already holds its canonical form.
func (c *Crawler) admitRedirect(pb *pageBatch, l frontier.Lease, location string) {
	lu, err := c.canon.ResolveString(l.URL, location)
	if err != nil {
		c.stats.reject(RejectInvalid)
		c.log.Info("bad redirect location", "url", l.URL, "location", location, "err", err)
		return
	}
	if l.Hops+1 > c.cfg.MaxRedirects {
		c.stats.reject(RejectRedirects)
		c.log.Info("redirect chain too long", "url", l.URL, "location", location)
		return
	}
	if l.Depth == 0 {
		c.scope.AddSeed(lu)
		pb.widenScope(lu.String)
	}
	if lu.String == l.URL {
		pb.items = append(pb.items, frontier.Item{URL: lu.String, Fetch: location, Host: lu.Authority, Depth: l.Depth, Priority: l.Priority, Hops: l.Hops + 1, Via: l.URL})
		return
	}
	it, why := c.judge(pb, lu, l.Depth, l.Hops+1, l.Priority, l.URL, asLink)
	switch why {
	case "":
		pb.items = append(pb.items, it)
	case RejectSeen:
		// A loop, or a page reached before by another way.
		c.stats.redirectSeen.Add(1)
	}
}

// admitURL judges a URL and, if it is to be queued, stages it in pb.
func (c *Crawler) admitURL(pb *pageBatch, u canon.URL, depth, hops int, p frontier.Priority, via string) {
	if it, why := c.judge(pb, u, depth, hops, p, via, asLink); why == "" {
		pb.items = append(pb.items, it)
	}
}

// judge runs a canonical URL through every filter, cheapest first, and
// returns the frontier item when it is to be queued, else the reason it is
// not (RejectSeen last of all). Every rejection is counted by reason. A resource (an image a page shows, a sitemap) is
// fetched for what it is, not for links it may hold, so the extension rule
// does not apply to it.
func (c *Crawler) judge(pb *pageBatch, u canon.URL, depth, hops int, p frontier.Priority, via string, as admission) (frontier.Item, string) {
	resource, offered := as == asResource || as == asOfferedResource, as == asOffered || as == asOfferedResource
	switch {
	case resource: // fetched for what it is (an image, a sitemap): no extension rule
		if r := c.scope.CheckEmbed(u, depth); r != "" {
			c.refuse(u.Authority, string(r))
			return frontier.Item{}, string(r)
		}
	case depth > 0 || hops > 0: // seeds are in scope by definition
		if r := c.scope.Check(u, depth); r != "" {
			c.refuse(u.Authority, string(r))
			return frontier.Item{}, string(r)
		}
	}
	if c.fetcher.Permits(u.Host) != nil {
		// An address the SSRF guard refuses, known without DNS: not
		// queued at all. Names are judged again at every connect.
		c.stats.reject(RejectForbidden)
		return frontier.Item{}, RejectForbidden
	}
	if u.Path == "/robots.txt" {
		// Fetched through the robots cache only: as a page it would probe
		// a host whose robots.txt failed, and fetch the file twice.
		c.stats.reject(RejectFilter)
		return frontier.Item{}, RejectFilter
	}
	if pol := c.robots.cached(originKey(u.Scheme, u.Authority), time.Now()); pol != nil && !pol.Allowed(u.PathQuery()) {
		c.stats.reject(RejectRobots)
		return frontier.Item{}, RejectRobots
	}
	if c.trapped(u.Authority) {
		c.refuse(u.Authority, RejectTrap)
		return frontier.Item{}, RejectTrap
	}
	hp := c.cfg.Policies.For(u.Authority, u.Host)
	if !hp.Allowed(u.PathQuery()) {
		c.stats.reject(RejectPolicy)
		return frontier.Item{}, RejectPolicy
	}
	if c.cfg.Owns != nil && !offered && !c.cfg.Owns(u.Authority) {
		// Another node's host: its owner judges whether the URL is new.
		pb.forward = append(pb.forward, Offered{URL: u.String, Depth: depth, Hops: hops, Priority: p, Via: via, Resource: resource})
		c.stats.forwarded.Add(1)
		return frontier.Item{}, RejectForwarded
	}
	capURLs := c.cfg.MaxURLsPerHost
	if hp != nil && hp.MaxURLs > 0 && (capURLs == 0 || hp.MaxURLs < capURLs) {
		capURLs = hp.MaxURLs // a policy only lowers the cap
	}
	it := frontier.Item{URL: u.String, Host: u.Authority, Depth: depth, Priority: p, Hops: hops, Via: via}
	record := pb.recorder(&it)
	isNew, err := c.seen.Add(u.Authority, u.String, func(part int, k seen.Key) (bool, error) {
		// Counted only for URLs that are new, and checked before anything
		// is written, so a capped URL is neither queued nor marked seen.
		// Seeds are exempt from the pattern cap, as from the scope.
		full, pk := c.traps.full(u)
		if full && depth+hops > 0 {
			return false, errPatternCap
		}
		if as == asPageLink && c.indexAlias(pb, u) {
			return false, errIndexAlias
		}
		if capURLs > 0 && c.hostCap.update(u.Authority, func(n int64) int64 { return n + 1 }) > capURLs {
			return false, errHostCap
		}
		ok, err := record(part, k)
		if ok && err == nil {
			c.traps.admitted(pk)
		}
		return ok, err
	})
	switch {
	case errors.Is(err, errHostCap):
		c.refuse(u.Authority, RejectHostCap)
		return frontier.Item{}, RejectHostCap
	case errors.Is(err, errPatternCap):
		c.refuse(u.Authority, RejectPattern)
		return frontier.Item{}, RejectPattern
	case errors.Is(err, errIndexAlias):
		c.stats.reject(RejectIndexAlias)
		return frontier.Item{}, RejectIndexAlias
	case err != nil:
		c.fail(fmt.Errorf("crawl: accept %s: %w", u.String, err))
		return frontier.Item{}, "error"
	case !isNew:
		c.stats.reject(RejectSeen)
		return frontier.Item{}, RejectSeen
	}
	return it, ""
}

// requeued reports whether the batch queues url again (a redirect to a
// variant of itself): it is not done.
func requeued(pb *pageBatch, url string) bool {
	for _, it := range pb.items {
		if it.URL == url {
			return true
		}
	}
	return false
}

// admission is how a URL came to be judged.
type admission uint8

const (
	asLink            admission = iota // a link, a redirect, a seed
	asPageLink                         // a link found on a page, which the index-alias rule may skip
	asResource                         // fetched for what it is (an image, a sitemap): no extension rule
	asOffered                          // handed over by the cluster (Offer): this crawl owns its host
	asOfferedResource                  // both
)

var (
	errHostCap    = errors.New("host cap reached")
	errPatternCap = errors.New("pattern cap reached")
)

// refuse counts a URL of host refused for reason, and what trap rules
// refuse per host.
func (c *Crawler) refuse(host, reason string) {
	c.stats.reject(reason)
	if trapRule(reason) {
		c.traps.refused(host, reason)
	}
}

// fetchRecord is one line of fetches.jsonl: the FETCH table of DESIGN.md.
type fetchRecord struct {
	Time        time.Time `json:"time"`
	URL         string    `json:"url"`
	Host        string    `json:"host"`
	Status      int       `json:"status,omitempty"`
	Bytes       int       `json:"bytes"`
	DurationMS  int64     `json:"duration_ms"`
	Outcome     string    `json:"outcome"`
	Error       string    `json:"error,omitempty"`
	Depth       int       `json:"depth"`
	Hops        int       `json:"hops,omitempty"`
	Via         string    `json:"via,omitempty"`
	Location    string    `json:"location,omitempty"`
	ContentType string    `json:"content_type,omitempty"`
	SHA256      string    `json:"sha256,omitempty"`
	NearDupOf   string    `json:"near_dup_of,omitempty"`
	Truncated   string    `json:"truncated,omitempty"`
	Links       int       `json:"links,omitempty"`
	NoIndex     bool      `json:"noindex,omitempty"`
	NoFollow    bool      `json:"nofollow,omitempty"`
	WARCFile    string    `json:"warc_file,omitempty"`
	WARCOffset  int64     `json:"warc_offset,omitempty"`
}

type fetchLog struct {
	mu  sync.Mutex
	f   *os.File
	w   *bufio.Writer
	enc *json.Encoder
	err error
	// recent holds the last recentFetches records, a ring from next.
	recent []fetchRecord
	next   int
	// outcomes counts the records by outcome ("ok", "redirect",
	// "revisit", "not-modified", "error:timeout", ...).
	outcomes map[string]int64
}

// recentFetches is how many of the last fetches Recent returns.
const recentFetches = 100

func openFetchLog(path string) (*fetchLog, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("crawl: fetch log: %w", err)
	}
	w := bufio.NewWriterSize(f, 64<<10)
	return &fetchLog{f: f, w: w, enc: json.NewEncoder(w)}, nil
}

func (l *fetchLog) write(r fetchRecord) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err == nil {
		l.err = l.enc.Encode(r)
	}
	if l.outcomes == nil {
		l.outcomes = map[string]int64{}
	}
	l.outcomes[r.Outcome]++
	if len(l.recent) < recentFetches {
		l.recent = append(l.recent, r)
	} else {
		l.recent[l.next] = r
		l.next = (l.next + 1) % recentFetches
	}
}

// byOutcome returns the fetches logged so far by outcome.
func (l *fetchLog) byOutcome() map[string]int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return maps.Clone(l.outcomes)
}

// last returns the last fetches, newest first.
func (l *fetchLog) last() []fetchRecord {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]fetchRecord, 0, len(l.recent))
	for i := range l.recent {
		out = append(out, l.recent[(l.next+len(l.recent)-1-i)%len(l.recent)])
	}
	return out
}

func (l *fetchLog) close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	err := errors.Join(l.err, l.w.Flush(), l.f.Sync(), l.f.Close())
	if err != nil {
		return fmt.Errorf("crawl: fetch log %s: %w", l.f.Name(), err)
	}
	return nil
}
