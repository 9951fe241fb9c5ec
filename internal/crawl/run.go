package crawl

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/weft-crawler/weft/internal/archive"
	"github.com/weft-crawler/weft/internal/fetchlog"
	"github.com/weft-crawler/weft/internal/frontier"
	"github.com/weft-crawler/weft/internal/judge"
	"github.com/weft-crawler/weft/internal/lifecycle"
	"github.com/weft-crawler/weft/internal/report"
	"github.com/weft-crawler/weft/internal/seeds"
)

// Run crawls until the frontier drains, MaxPages is reached or ctx is
// done, then closes the output and returns what it did. When ctx is done,
// no new lease is taken and the fetches in flight get Config.Grace to
// finish before they are cut; the summary then says "interrupted", which is
// not an error.
func (c *Crawler) Run(ctx context.Context) (Summary, error) {
	for _, f := range c.arch.Recovered() {
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
	c.robots.Begin(warmCtx)    // ends as the crawl closes: hops asked of other nodes stop waiting
	closeAll := func() error { // the rebuild of the seen set reads the store
		stopWarm()
		warm.Wait()
		c.robots.Wait()
		c.life.Set(func(p *lifecycle.Phase) { p.Running, p.Closed = false, true }) // the API reads and writes no more
		c.doneOnce.Do(func() { close(c.done) })
		return c.close(archive.UploadDrain)
	}
	if err := c.importEarlier(ctx); err != nil {
		return Summary{StoppedBy: "failed"}, errors.Join(err, closeAll())
	}
	if err := c.out.Replay(); err != nil {
		return Summary{StoppedBy: "failed"}, errors.Join(err, closeAll())
	}
	if c.resumed {
		extra, err := c.state.ScopeSeeds()
		if err != nil {
			return Summary{StoppedBy: "failed"}, errors.Join(err, closeAll())
		}
		for _, s := range extra {
			if u, err := c.canon.Parse(s.URL); err == nil && !c.seedReg.Widen(seeds.ID(s.Seed), u) {
				c.scope.AddSeed(u)
			}
		}
		// The crawl goes on at once: the queues are read from disk as
		// they are needed, and the seen set, whose filters are rebuilt in
		// the background, asks the store about every URL meanwhile.
		c.seen.StartWarming()
		warm.Go(func() {
			urls, err := c.state.FillSeen(warmCtx, c.seen)
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
	sb := c.state.NewBatch()
	c.seedWhy = map[string]string{}
	for i, u := range c.seeds {
		cand := judge.Candidate{URL: u, Priority: frontier.High, Seed: uint32(c.seedIDs[i])}
		c.seedReg.Record(sb.Batch, c.seedIDs[i])
		if i >= len(c.seeds)-c.lists {
			cand.As, cand.Sitemap = judge.AsResource, true
		}
		switch why := c.admit(sb, cand); why {
		case "", judge.Seen, judge.Forwarded: // queued, or an earlier run's or another node's: its record says
		default:
			c.seedWhy[u.String] = why
		}
	}
	if err := sb.Commit(c.seen, c.front); errors.Is(err, ErrStopping) {
		return Summary{StoppedBy: "stopped"}, closeAll() // before it began: the seeds are offered again next run
	} else if err != nil {
		return Summary{StoppedBy: "failed"}, errors.Join(fmt.Errorf("crawl: record seeds: %w", err), closeAll())
	}
	c.setRunning()

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
	c.life.Set(func(p *lifecycle.Phase) { p.FrontierUp = true }) // the frontier answers Stats, Host and Hosts from now on
	go func() { frontErr <- c.front.Run(leaseCtx) }()
	var rescan sync.WaitGroup
	if c.cfg.Recrawl != nil {
		rescan.Go(func() { c.rescan(leaseCtx) })
	}
	rescan.Go(func() {
		c.ext.Sweep(leaseCtx, 250*time.Millisecond, c.endExpired)
	})

	var wg sync.WaitGroup
	for i := range c.cfg.Workers {
		// Numbered for the crawl log's worker field.
		wg.Go(func() { c.work(fetchlog.WithWorker(fetchCtx, i), leaseCtx) })
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
	c.stats.resumedQueue.Store(int64(stats.Earlier - stats.EarlierAgain))

	sum := c.summary()
	sum.Queued = c.queuedURLs(stats) + stats.InFlight
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
	case ferr == nil && len(stats.Left) > 0:
		// Nothing left but hosts held back by failures, waited for as
		// long as FailureWait allows: their URLs stay queued.
		sum.StoppedBy = "deferred"
		if err := c.listDeferred(&sum, stats.Left); err != nil {
			c.fail(err)
		} else {
			// The list read every entry left and named each URL once,
			// which the count of copies made and gone may miss after a
			// restart (copiesQueued).
			sum.Queued = int(sum.Deferred)
		}
	case ferr == nil:
		sum.StoppedBy = "drained"
	default:
		sum.StoppedBy = "stopped"
	}
	c.reportSeeds(&sum)
	err := errors.Join(c.fatalErr(), closeAll())
	sum.WARCFiles = c.warc.Files()
	sum.WARCBytes = c.warc.Bytes()
	sum.WARCUploads = c.uploads.Summary() // after the close, which uploads the last file
	return sum, err
}

func (c *Crawler) summary() Summary {
	s := c.stats
	s.mu.Lock()
	defer s.mu.Unlock()
	ac := c.arch.Counts()
	rc := c.robots.Counts()
	sc := c.recrawler.Counts()
	sum := Summary{
		Elapsed:            time.Since(c.start),
		Pages:              s.pages.Load(),
		RequisiteFetches:   s.requisiteFetches.Load(),
		SitemapFetches:     s.sitemapFetches.Load(),
		RobotsFetches:      rc.Fetches,
		Bytes:              s.bytes.Load() + rc.Bytes,
		Truncated:          s.truncated.Load(),
		Revisits:           ac.Revisits,
		NearDups:           s.nearDups.Load(),
		NotModified:        ac.NotModified,
		Recrawls:           sc.Recrawls,
		ListedChanged:      sc.ListedChanged,
		ListedDropped:      sc.ListedDropped,
		RevisitBytes:       ac.RevisitBytes,
		EarlierRevisits:    ac.EarlierRevisits,
		EarlierBytes:       ac.EarlierRevisitBytes,
		DedupImported:      s.dedupImported.Load(),
		Browser:            c.rend.Summary(c.cfg.Render.Mode, c.rendOff),
		Rendered:           ac.Rendered,
		Requisites:         s.requisitesFound.Load(),
		RequisitesQueued:   s.requisitesQueued.Load(),
		RequisitesArchived: s.requisitesArchived.Load(),
		OverDecodeCap:      s.overDecode.Load(),
		Binary:             s.binary.Load(),
		Charsets:           clone(s.charsets),
		RedirectSeen:       s.redirectSeen.Load(),
		Forwarded:          s.forwarded.Load(),
		Requeued:           s.requeued.Load(),
		RobotsCut:          rc.Cut,
		BadEncoding:        s.badCoding.Load(),
		ByStatus:           clone(s.byClass),
		Errors:             clone(s.byError),
		Rejected:           c.judge.Rejected(),
		Held:               c.judge.Held(),
		Released:           c.judge.Released(),
		Handled:            clone(s.handled),
		Archived:           clone(s.archivedTypes),
		Refused:            clone(s.refusedTypes),
		Unreadable:         clone(s.unreadable),
		Cut:                clone(s.cut),
		Extended:           clone(s.extended),
		ExtensionFailed:    clone(s.extFailed),
		Robots:             rc.Outcomes,
		RobotsHops:         rc.Hops,
		RobotsRetries:      rc.Retries,
		RobotsLastGood:     rc.LastGood,
		Policies:           c.cfg.Policies.Len(),
		HostsDown:          rc.HostsDown,
		HostsDownNamed:     rc.DownNamed,
		NoIndex:            s.noindex.Load(),
		SitemapsLater:      s.sitemapsLater.Load(),
		NoFollow:           s.nofollow.Load(),
		Throttled:          s.throttled.Load(),
		Unavailable:        s.unavailable.Load(),
		Strained:           s.strained.Load(),
		Retried:            s.retried.Load(),
		Parks:              s.parks.Load(),
		SeenFalsePos:       c.seen.Stats().FalsePositives,
		Resumed:            c.resumed,
		ResumedURLs:        s.resumedURLs.Load(),
		ResumedQueue:       s.resumedQueue.Load(),
		WARCRecovered:      len(c.arch.Recovered()),
		WARCUploads:        c.uploads.Summary(), // so far
	}
	for kind, n := range rc.Errors { // pages' and robots.txt's
		sum.Errors[kind] += n
	}
	var top []HostPages
	sum.LinksCut, top = s.topLinksCut(report.MaxNamed)
	if len(top) > 0 {
		sum.LinksCutHosts = make(map[string]int64, len(top))
		for _, h := range top {
			sum.LinksCutHosts[h.Host] = h.Pages
		}
	}
	sum.GaveUp, sum.GaveUpHosts = s.gaveUp.Snapshot()
	sum.Traps, sum.TrapHosts = c.judge.Cut()
	sum.TrapCosts, sum.TrapHostCount = c.judge.TrapReport()
	sum.InertParamHosts, sum.InertParams = c.judge.InertParams(report.MaxNamed)
	sum.OffsiteRedirectors = c.judge.OffsiteRedirectors()
	return sum
}

func clone(m map[string]int64) map[string]int64 {
	out := make(map[string]int64, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
