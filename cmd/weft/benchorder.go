package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/netip"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/weft-crawler/weft"
	"github.com/weft-crawler/weft/internal/crawl"
	"github.com/weft-crawler/weft/internal/settings"
	"github.com/weft-crawler/weft/internal/synthweb"
)

type orderBenchFlags struct {
	hosts, pages, workers int
	seed                  int64
	share                 float64
	keep                  bool
}

// orderShares are the shares of the web's pages fetched at which the
// report gives the PageRank held.
var orderShares = []float64{0.05, 0.10, 0.20, 0.40}

// orderGapAt is the index in orderShares of the share the gap closed is
// measured at: 10 %.
const orderGapAt = 1

// orderDamping is PageRank's damping factor.
const orderDamping = 0.85

// orderReport is the bench's machine-readable line. A share the crawl did
// not reach is null in Weft, and GapClosed is null when the crawl did not
// reach 10 % or breadth-first is already the best order there.
type orderReport struct {
	Bench      string     `json:"bench"`
	Hosts      int        `json:"hosts"`
	Pages      int        `json:"pages"`
	Seed       int64      `json:"seed"`
	Workers    int        `json:"workers"`
	MaxPages   int64      `json:"max_pages"`
	Fetched    int        `json:"fetched"`
	Shares     []float64  `json:"shares"`
	Weft       []*float64 `json:"weft"`
	BFS        []float64  `json:"bfs"`
	Best       []float64  `json:"best"`
	BestPolite []float64  `json:"best_polite"`
	GapClosed  *float64   `json:"gap_closed"`
	// The requests that were not a page's first fetch.
	Robots   int     `json:"robots"`
	Sitemaps int     `json:"sitemaps"`
	Again    int     `json:"pages_again"`
	Other    int     `json:"not_pages"`
	Wall     float64 `json:"wall_seconds"`
}

func newBenchOrderCmd() *cobra.Command {
	var f orderBenchFlags
	cmd := &cobra.Command{
		Use:   "order",
		Short: "Crawl a web whose important pages are deep and report how much PageRank the fetch order held early",
		Long: `Starts the synthetic web's order world on loopback: --hosts sites of about
--pages-per-host pages each, whose in-degree is heavy-tailed and whose most
linked pages are articles, three to six levels down each site's tree and
three or four hops from the nearest home page, behind a long shallow tail
of pagination, facet, tag and archive pages (go doc
github.com/weft-crawler/weft/internal/synthweb.WorldOrder says more). It
crawls it with weft's default settings but --delay 0, --latency-factor off
(it ties each host's pace to the machine's load of the moment, which made
the figure swing between runs), --render never and --max-pages at
--max-pages-share of the web's pages, one request in flight per host as
always. Then it reads the web's own request log in the order the requests
started, keeps each page's first fetch (not robots.txt, sitemaps, a page
asked for again or what is not a page of the web), and reports the share
of the web's PageRank (damping 0.85) held by the pages fetched when 5, 10,
20 and 40 % of the web's pages had been; a share the crawl did not reach
is reported as not reached (-, null in the JSON).

Beside it: "bfs", a polite breadth-first crawl simulated on the link
graph (a first-in first-out queue per host, the hosts taking turns, one
page each, from the home pages: what a crawler with one request in flight
per host and no notion of importance does); "best", the pages by
decreasing PageRank, the best any order can do; and "best polite", the
best the hosts' turns allow (each host's pages by decreasing PageRank,
the hosts taking turns). The gap closed is (weft - bfs) / (best - bfs)
at 10 %. The last line is the report as JSON.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runBenchOrder(cmd, f) },
	}
	fs := cmd.Flags()
	fs.IntVar(&f.hosts, "hosts", 100, "hosts in the web")
	fs.IntVar(&f.pages, "pages-per-host", 500, "mean pages per host (each host has between half and one and a half times as many, at least 80)")
	fs.Int64Var(&f.seed, "seed", 1, "seed of the web")
	fs.Float64Var(&f.share, "max-pages-share", 0.2, "the crawl's --max-pages as a share of the web's pages")
	fs.IntVar(&f.workers, "workers", 64, "concurrent fetches")
	fs.BoolVar(&f.keep, "keep", false, "keep the data directory")
	return cmd
}

func runBenchOrder(cmd *cobra.Command, f orderBenchFlags) error {
	out, errOut := cmd.OutOrStdout(), cmd.ErrOrStderr()
	switch {
	case f.hosts < 1 || f.hosts > 10_000:
		return usagef("--hosts %d: want 1 to 10000", f.hosts)
	case f.pages < 1 || f.pages > 100_000:
		return usagef("--pages-per-host %d: want 1 to 100000", f.pages)
	case !(f.share > 0 && f.share <= 1):
		return usagef("--max-pages-share %v: want more than 0, at most 1", f.share)
	case f.workers < 1:
		return usagef("--workers %d: want at least 1", f.workers)
	}
	start := time.Now()
	web, err := synthweb.Start(synthweb.Config{World: synthweb.WorldOrder, Seed: f.seed, Hosts: f.hosts, PagesPerHost: f.pages})
	if err != nil {
		return fmt.Errorf("bench order: %w", err)
	}
	defer web.Close()
	g := web.OrderGraph()
	rank := g.PageRank(orderDamping, 1e-10)
	n := g.Len()
	maxPages := int64(math.Ceil(f.share * float64(n)))

	dir, err := os.MkdirTemp("", "weft-bench-order-")
	if err != nil {
		return err
	}
	if !f.keep {
		defer os.RemoveAll(dir)
	}
	cfg, err := orderCrawlConfig(web, dir, f.workers, maxPages)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "weft bench order: %d hosts, %d pages, seed %d, %d workers, delay 0, max %d pages (%.0f %% of the web), in %s\n",
		f.hosts, n, f.seed, f.workers, maxPages, f.share*100, dir)
	crawlStart := time.Now()
	sum, err := runCrawl(cmd.Context(), cfg, runOpts{progress: "never"}, io.Discard, errOut)
	crawlWall := time.Since(crawlStart)
	if err != nil {
		return err
	}
	idle, cancel := context.WithTimeout(context.WithoutCancel(cmd.Context()), 10*time.Second)
	defer cancel()
	if err := web.WaitIdle(idle); err != nil {
		return fmt.Errorf("bench order: %w", err)
	}
	order, counts := fetchOrder(web, web.Log())

	bfs := g.BreadthFirstByHost()
	best := synthweb.RankOrder(rank)
	polite := g.PoliteRankOrder(rank)
	rep := orderReport{Bench: "order", Hosts: f.hosts, Pages: n, Seed: f.seed, Workers: f.workers, MaxPages: maxPages,
		Fetched: len(order), Shares: orderShares, Robots: counts.robots, Sitemaps: counts.sitemaps, Again: counts.again, Other: counts.other}
	for _, s := range orderShares {
		k := int(math.Round(s * float64(n)))
		if m, ok := synthweb.MassAt(order, rank, k); ok {
			rep.Weft = append(rep.Weft, &m)
		} else {
			rep.Weft = append(rep.Weft, nil)
		}
		rep.BFS = append(rep.BFS, massAt(bfs, rank, k))
		rep.Best = append(rep.Best, massAt(best, rank, k))
		rep.BestPolite = append(rep.BestPolite, massAt(polite, rank, k))
	}
	if w := rep.Weft[orderGapAt]; w != nil && rep.Best[orderGapAt] > rep.BFS[orderGapAt] {
		gap := (*w - rep.BFS[orderGapAt]) / (rep.Best[orderGapAt] - rep.BFS[orderGapAt])
		rep.GapClosed = &gap
	}
	rep.Wall = time.Since(start).Seconds()

	fmt.Fprintf(out, "PageRank held when a share of the web's %d pages had been fetched:\n", n)
	head := fmt.Sprintf("%-15s", "order")
	for _, s := range orderShares {
		head += fmt.Sprintf("%8s", fmt.Sprintf("%.0f %%", s*100))
	}
	fmt.Fprintln(out, strings.TrimRight(head, " "))
	row := func(name string, v []float64) {
		line := fmt.Sprintf("%-15s", name)
		for _, x := range v {
			line += fmt.Sprintf("%8.3f", x)
		}
		fmt.Fprintln(out, line)
	}
	weftLine := fmt.Sprintf("%-15s", "weft")
	short := false
	for _, w := range rep.Weft {
		if w == nil {
			weftLine += fmt.Sprintf("%8s", "-")
			short = true
		} else {
			weftLine += fmt.Sprintf("%8.3f", *w)
		}
	}
	if short {
		weftLine += fmt.Sprintf("  (-: not reached, the crawl fetched %.1f %% of the web)", 100*float64(len(order))/float64(n))
	}
	fmt.Fprintln(out, weftLine)
	row("bfs", rep.BFS)
	row("best", rep.Best)
	row("best polite", rep.BestPolite)
	if rep.GapClosed != nil {
		fmt.Fprintf(out, "%-15s%.3f at 10 %%: (weft - bfs) / (best - bfs)\n", "gap closed", *rep.GapClosed)
	} else {
		fmt.Fprintf(out, "%-15s%s\n", "gap closed", "none: the crawl did not reach 10 %, or bfs is the best order there")
	}
	fmt.Fprintf(out, "%-15s%d (the web's log: distinct pages, first fetches in the order they started; the crawl counted %d)\n", "pages fetched", len(order), sum.Pages)
	fmt.Fprintf(out, "%-15s%d robots.txt, %d sitemaps, %d pages again, %d not pages of the web\n", "other requests",
		counts.robots, counts.sitemaps, counts.again, counts.other)
	fmt.Fprintf(out, "%-15s%s\n", "stopped by", sum.StoppedBy)
	fmt.Fprintf(out, "%-15s%v (the crawl %v)\n", "wall", time.Duration(rep.Wall*float64(time.Second)).Round(time.Millisecond), crawlWall.Round(time.Millisecond))
	line, err := json.Marshal(rep)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "%s\n", line)
	return nil
}

// massAt is MassAt for an order known to be long enough; a simulated
// order stops at the pages the seeds reach, which is every page of the
// world, so a short one is reported as all it holds.
func massAt(order []int32, rank []float64, k int) float64 {
	m, ok := synthweb.MassAt(order, rank, min(k, len(order)))
	if !ok {
		return 0
	}
	return m
}

// logCounts counts the requests of the web's log that are not a page's
// first fetch.
type logCounts struct {
	robots, sitemaps, again, other int
}

// fetchOrder reads the web's request log, in the order the requests
// started, into the pages fetched, each once at its first fetch, and
// counts the other requests: robots.txt, sitemaps (the web has none),
// pages asked for again and anything else (a favicon, say).
func fetchOrder(web *synthweb.Web, log []synthweb.Request) (order []int32, n logCounts) {
	seen := make(map[int32]bool)
	for _, r := range log {
		p, ok := web.OrderPage(r)
		switch {
		case ok && !seen[p]:
			seen[p] = true
			order = append(order, p)
		case ok:
			n.again++
		case r.Path == "/robots.txt":
			n.robots++
		case strings.HasPrefix(r.Path, "/sitemap"):
			n.sitemaps++
		default:
			n.other++
		}
	}
	return order, n
}

// orderCrawlConfig is the crawl of the order world: weft's defaults, but
// no gap between requests (politeness is still one request in flight per
// host), no rendering (the web has no scripts) and the web's resolver,
// with loopback allowed. The latency factor is off too: it spaces a
// host's requests by its last response's time, which on a shared machine
// is the load of the moment, so hosts drifted apart at random and a host
// left behind met its popular pages through other hosts' links before its
// own shallow ones; the gap closed by one build swung from 0 to 0.46
// between runs, where without it four runs agree to 0.002.
func orderCrawlConfig(web *synthweb.Web, dir string, workers int, maxPages int64) (crawl.Config, error) {
	return settings.Crawl(weft.Config{
		Seeds:         web.Seeds(),
		DataDir:       dir,
		Workers:       workers,
		MaxPages:      maxPages,
		UserAgent:     defaultUserAgent(),
		ExpectedURLs:  uint(max(web.URLCount(), 1000)) * 2,
		Delay:         -1,
		LatencyFactor: -1,
		RenderMode:    crawl.RenderNever,
		Resolve:       web.Resolve(),
		AllowNetworks: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
	})
}
