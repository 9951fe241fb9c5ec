package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"os"
	"os/signal"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/weft-crawler/weft"
	"github.com/weft-crawler/weft/internal/crawl"
	"github.com/weft-crawler/weft/internal/settings"
	"github.com/weft-crawler/weft/internal/synthweb"
)

type benchFlags struct {
	hosts, pages, workers int
	maxPages              int64
	seed                  int64
	keep                  bool
	prerendered, bareLoop bool
	cpuProfile            string
	memProfile            string
	world                 string
}

// webInfo is what the synthweb child process tells its parent.
type webInfo struct {
	Seeds   []string          `json:"seeds"`
	Resolve map[string]string `json:"resolve"`
	URLs    int               `json:"urls"`
	// Pages are the URLs of the web's pages (answered 200), when the
	// child is asked for them (--list-pages).
	Pages []string `json:"pages,omitempty"`
}

func newBenchCmd() *cobra.Command {
	var f benchFlags
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Crawl the synthetic web at delay 0 and report pages/s, CPU and allocations per page",
		Long: `Runs the synthetic web in a child process (so its CPU is not charged to the
crawler), crawls it at delay 0 with full processing (robots.txt, parse,
canonicalise, seen set, WARC), and reports the crawler's wall-clock rate,
its own CPU time (user+system, from getrusage) per unique page and per
request, and its heap allocations per unique page. Unique pages and
requests are counted from the web's request log: distinct canonical URLs
answered 2xx, and every request (redirects and robots.txt included). The
per-host rule still holds: one request in flight per host.

The default world, "heavy", is as heavy as a real web (issue 37's bench
web): 50 hosts of 200 pages, 10,000 pages of 20-60 KB with 40-80 links
each, 30 % of them to other hosts; about 85 % of pages are linked only
through a URL that redirects to them (a short link, a click tracker, a
missing trailing slash, the host's "www." name), so a crawl makes about
0.85 redirects a page; a third of the links carry tracking or session
parameters, and queries come in any order. By default the crawl takes the
whole web. "seeds" is shaped like the web the seeds size a crawl for:
about 100 links a page, nine in ten to pages already seen, short links
that redirect; its 200 hosts hold ten times the 20,000 pages the crawl
fetches. "classic" is the web of the end-to-end tests, 40-80 links a page.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runBench(cmd, f) },
	}
	fs := cmd.Flags()
	fs.IntVar(&f.hosts, "hosts", 0, "hosts in the synthetic web (0: 50 in the heavy world, 200 in the others)")
	fs.IntVar(&f.pages, "pages-per-host", 0, "mean pages per host (0: 200 in the heavy world, 1000 in the seeds one, 100 in the classic one)")
	fs.IntVar(&f.workers, "workers", 64, "concurrent fetches")
	fs.Int64Var(&f.maxPages, "max-pages", -1, "pages to crawl (0: the whole web; -1: the whole web in the heavy world, 20000 in the others)")
	fs.Int64Var(&f.seed, "seed", 1, "seed of the synthetic web")
	fs.BoolVar(&f.keep, "keep", false, "keep the data directory")
	fs.StringVar(&f.cpuProfile, "cpuprofile", "", "write a CPU profile of the crawl to this file")
	fs.StringVar(&f.memProfile, "memprofile", "", "write a profile of the crawl's heap allocations to this file (go tool pprof -sample_index=alloc_space)")
	fs.StringVar(&f.world, "world", string(synthweb.WorldHeavy), "shape of the synthetic web: heavy (as heavy as a real web), seeds (like the seeds' web) or classic (the tests' web)")
	fs.BoolVar(&f.prerendered, "prerendered", false, "serve the heavy world's pages from copies rendered as the web starts, as a server of static files does")
	fs.BoolVar(&f.bareLoop, "bare-loop", false, "then time a bare loop of GET requests over the web's pages (a fresh web of the same shape, the hosts in turn, as many requests at a time as --workers, bodies read and discarded) and give weft's rate as a share of it")
	return cmd
}

// benchPages is the default --pages-per-host of a world.
func benchPages(world string, pages int) int {
	switch {
	case pages != 0:
		return pages
	case world == string(synthweb.WorldHeavy):
		return 200
	case world == string(synthweb.WorldClassic):
		return 100
	}
	return 1000
}

// benchHosts is the default --hosts of a world.
func benchHosts(world string, hosts int) int {
	switch {
	case hosts != 0:
		return hosts
	case world == string(synthweb.WorldHeavy):
		return 50
	}
	return 200
}

// benchMaxPages is the default --max-pages of a world: the heavy world is
// small enough to crawl whole, the others hold ten times what a run takes.
func benchMaxPages(world string, maxPages int64) int64 {
	switch {
	case maxPages >= 0:
		return maxPages
	case world == string(synthweb.WorldHeavy):
		return 0
	}
	return 20000
}

// checkWorld names a bad --world.
func checkWorld(world string) error {
	switch synthweb.World(world) {
	case synthweb.WorldHeavy, synthweb.WorldSeeds, synthweb.WorldClassic:
		return nil
	}
	return usagef("--world %q: want %q, %q or %q", world, synthweb.WorldHeavy, synthweb.WorldSeeds, synthweb.WorldClassic)
}

// heapAllocs reads the objects and bytes allocated on the heap so far.
func heapAllocs() (objects, bytes uint64) {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:objects"}, {Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64(), s[1].Value.Uint64()
}

func runBench(cmd *cobra.Command, f benchFlags) error {
	out := cmd.OutOrStdout()
	if err := checkWorld(f.world); err != nil {
		return err
	}
	if f.bareLoop && f.workers < 1 {
		return usagef("--bare-loop: --workers %d, want 1 or more", f.workers)
	}
	if f.prerendered && f.world != string(synthweb.WorldHeavy) {
		return usagef("--prerendered: only the heavy world is pre-rendered, not %q", f.world)
	}
	if f.maxPages < -1 {
		return usagef("--max-pages %d: want 0 or more, or -1 for the world's default", f.maxPages)
	}
	f.pages = benchPages(f.world, f.pages)
	f.hosts = benchHosts(f.world, f.hosts)
	f.maxPages = benchMaxPages(f.world, f.maxPages)
	ctx := cmd.Context()
	var info webInfo
	webArgs := []string{"synthweb",
		"--hosts", strconv.Itoa(f.hosts), "--pages-per-host", strconv.Itoa(f.pages), "--seed", strconv.FormatInt(f.seed, 10), "--world", f.world}
	if f.prerendered {
		webArgs = append(webArgs, "--prerendered")
	}
	web, err := startWebChild("bench", webArgs, cmd.ErrOrStderr(), &info)
	if err != nil {
		return err
	}
	var summary synthweb.LogSummary
	stopChild := func() time.Duration {
		// The child prints its log's summary as it ends.
		cpu, err := web.stop(&summary)
		if err != nil {
			fmt.Fprintf(cmd.ErrOrStderr(), "bench: no request log summary from the synthetic web: %v\n", err)
		}
		return cpu
	}
	childStopped := false
	defer func() {
		if !childStopped {
			stopChild()
		}
	}()

	dir, err := os.MkdirTemp("", "weft-bench-")
	if err != nil {
		return err
	}
	if !f.keep {
		defer os.RemoveAll(dir)
	}
	cfg, err := benchConfig(info, dir, f.workers, f.maxPages)
	if err != nil {
		return err
	}

	limit := "the whole web"
	if f.maxPages > 0 {
		limit = "max " + strconv.FormatInt(f.maxPages, 10) + " pages"
	}
	served := ""
	if f.prerendered {
		served = ", pre-rendered"
	}
	fmt.Fprintf(out, "weft bench: world %s%s, %d hosts, %d URLs, %d workers, delay 0, %s\n", f.world, served, f.hosts, info.URLs, f.workers, limit)
	stopProfile := func() {}
	if f.cpuProfile != "" {
		stop, err := startCPUProfile(f.cpuProfile)
		if err != nil {
			return err
		}
		// The crawl's alone: stopped before a bare loop.
		var once sync.Once
		stopProfile = func() { once.Do(stop) }
		defer stopProfile()
	}
	if f.memProfile != "" {
		// A sample every 4 KB allocated rather than every 512 KB: the
		// crawl's allocations, those that follow, are what it is for.
		defer func(rate int) { runtime.MemProfileRate = rate }(runtime.MemProfileRate)
		runtime.MemProfileRate = 4096
	}
	objects0, bytes0 := heapAllocs()
	before := cpuTime()
	start := time.Now()
	sum, err := runCrawl(ctx, cfg, runOpts{progress: "never"}, io.Discard, cmd.ErrOrStderr())
	wall := time.Since(start)
	cpu := cpuTime() - before
	objects1, bytes1 := heapAllocs()
	stopProfile()
	if err != nil {
		return err
	}
	if f.memProfile != "" {
		if err := writeHeapProfile(f.memProfile); err != nil {
			return err
		}
	}
	childStopped = true
	serverCPU := stopChild()
	pages := float64(sum.Pages)
	fmt.Fprintf(out, "pages          %d (+%d robots.txt), %.1f MB\n", sum.Pages, sum.RobotsFetches, float64(sum.Bytes)/1e6)
	fmt.Fprintf(out, "wall           %v\n", wall.Round(time.Millisecond))
	fmt.Fprintf(out, "pages/s        %.0f\n", pages/wall.Seconds())
	fmt.Fprintf(out, "crawler CPU    %.2f s (%.2f cores)\n", cpu.Seconds(), cpu.Seconds()/wall.Seconds())
	fmt.Fprintf(out, "CPU s/1000 pg  %.3f\n", cpu.Seconds()/pages*1000)
	fmt.Fprintf(out, "MB/s received  %.1f\n", float64(sum.Bytes)/wall.Seconds()/1e6)
	fmt.Fprintf(out, "server CPU     %.2f s (the synthetic web, in its own process)\n", serverCPU.Seconds())
	unique := float64(max(summary.UniquePages, 1))
	fmt.Fprintf(out, "unique pages   %d (the server's log: distinct canonical URLs answered 2xx)\n", summary.UniquePages)
	fmt.Fprintf(out, "requests       %d (%d redirects, %d robots.txt, %d other)\n", summary.Requests, summary.Redirects, summary.Robots, summary.Other)
	fmt.Fprintf(out, "unique pages/s %.0f\n", unique/wall.Seconds())
	fmt.Fprintf(out, "CPU ms/page    %.3f (per unique page)\n", cpu.Seconds()*1000/unique)
	fmt.Fprintf(out, "CPU ms/request %.3f\n", cpu.Seconds()*1000/float64(max(summary.Requests, 1)))
	fmt.Fprintf(out, "allocs/page    %.0f\n", float64(objects1-objects0)/unique)
	fmt.Fprintf(out, "alloc KB/page  %.1f\n", float64(bytes1-bytes0)/unique/1024)
	if f.bareLoop {
		return runBareLoop(ctx, out, cmd.ErrOrStderr(), webArgs, f.workers, int(f.maxPages), unique/wall.Seconds())
	}
	return nil
}

// runBareLoop times bareLoop over the pages of a fresh web started with
// webArgs (the first maxPages of them, when above 0, as many as the crawl
// took), and gives weftRate (unique pages/s) as a share of its rate.
func runBareLoop(ctx context.Context, out, stderr io.Writer, webArgs []string, conns, maxPages int, weftRate float64) error {
	var info webInfo
	web, err := startWebChild("bench", append(webArgs, "--list-pages"), stderr, &info)
	if err != nil {
		return err
	}
	urls := interleaveHosts(info.Pages)
	if maxPages > 0 && len(urls) > maxPages {
		urls = urls[:maxPages]
	}
	res, err := bareLoop(ctx, urls, info.Resolve, conns)
	var summary synthweb.LogSummary
	if _, serr := web.stop(&summary); serr != nil {
		fmt.Fprintf(stderr, "bench: no request log summary from the synthetic web: %v\n", serr)
	}
	if err != nil {
		return err
	}
	rate := float64(res.pages) / res.wall.Seconds()
	fmt.Fprintf(out, "bare GET loop  %d pages (%d failed, the server's log: %d unique) in %v, %.1f MB, %d at a time over %d connections, bodies discarded\n",
		res.pages, res.failed, summary.UniquePages, res.wall.Round(time.Millisecond), float64(res.bytes)/1e6, conns, res.dials)
	fmt.Fprintf(out, "bare pages/s   %.0f (CPU %.2f s)\n", rate, res.cpu.Seconds())
	fmt.Fprintf(out, "weft / bare    %.1f %% (unique pages/s)\n", 100*weftRate/rate)
	return nil
}

// startCPUProfile writes a CPU profile to path until stop is called.
func startCPUProfile(path string) (stop func(), err error) {
	pf, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(pf); err != nil {
		pf.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); pf.Close() }, nil
}

// writeHeapProfile writes the allocations sampled so far to path.
func writeHeapProfile(path string) error {
	pf, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.Lookup("allocs").WriteTo(pf, 0); err != nil {
		pf.Close()
		return fmt.Errorf("memprofile %s: %w", path, err)
	}
	return pf.Close()
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchRobotsKinds are the robots.txt variants of the benchmark web: every
// kind that answers at once and declares no Crawl-delay. A robots.txt that
// times out parks a worker for the header timeout and a Crawl-delay caps a
// host's rate; both are politeness working, not crawler throughput, so they
// are left out of a throughput measurement (the tests cover them).
func benchRobotsKinds() []synthweb.RobotsKind {
	return []synthweb.RobotsKind{synthweb.RobotsRules, synthweb.RobotsAgentGroup, synthweb.RobotsNotFound,
		synthweb.RobotsRedirect, synthweb.RobotsNone, synthweb.RobotsRedirectLoop}
}

// newSynthwebCmd serves the synthetic web until its stdin closes; bench
// runs it as a child process. It prints one JSON line: seeds and the
// host-to-address map.
func newSynthwebCmd() *cobra.Command {
	var hosts, pages int
	var seed int64
	var latency time.Duration
	var world string
	var ipAuthorities, rawAmp, prerendered, listPages bool
	cmd := &cobra.Command{
		Use:    "synthweb",
		Short:  "Serve the synthetic web on loopback until stdin closes (used by bench and scripts/compare-wget2)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkWorld(world); err != nil {
				return err
			}
			web, err := synthweb.Start(synthweb.Config{Seed: seed, Hosts: benchHosts(world, hosts), PagesPerHost: benchPages(world, pages),
				MaxLatency: latency, RobotsKinds: benchRobotsKinds(), World: synthweb.World(world), IPAuthorities: ipAuthorities, RawAmpersands: rawAmp,
				Prerendered: prerendered})
			if err != nil {
				return err
			}
			defer web.Close()
			info := webInfo{Seeds: web.Seeds(), Resolve: web.Resolve(), URLs: web.URLCount()}
			if listPages {
				for _, p := range web.AllPages() {
					if p.Status == http.StatusOK && p.Role != "redirect" {
						info.Pages = append(info.Pages, p.URL)
					}
				}
			}
			if err := json.NewEncoder(cmd.OutOrStdout()).Encode(info); err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			eof := make(chan struct{})
			go func() { io.Copy(io.Discard, os.Stdin); close(eof) }()
			select {
			case <-eof:
			case <-ctx.Done():
			}
			// The crawler has gone: what is still in flight ends soon.
			idle, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			web.WaitIdle(idle)
			return json.NewEncoder(cmd.OutOrStdout()).Encode(web.Summary())
		},
	}
	fs := cmd.Flags()
	fs.IntVar(&hosts, "hosts", 0, "hosts (0: 50 in the heavy world, 200 in the others)")
	fs.IntVar(&pages, "pages-per-host", 0, "mean pages per host (0: 200 in the heavy world, 1000 in the seeds one, 100 in the classic one)")
	fs.Int64Var(&seed, "seed", 1, "seed")
	fs.DurationVar(&latency, "latency", 0, "most extra latency per host")
	fs.StringVar(&world, "world", string(synthweb.WorldHeavy), "heavy, seeds or classic")
	fs.BoolVar(&ipAuthorities, "ip-authorities", false, "name hosts by their IP:port in URLs, for clients that cannot be given the resolve map")
	fs.BoolVar(&rawAmp, "raw-ampersands", false, `write "&" in the heavy and seeds worlds' link queries, not "&amp;", for clients that do not decode it`)
	fs.BoolVar(&prerendered, "prerendered", false, "render the heavy world's pages once, as it starts, and serve the copies")
	fs.BoolVar(&listPages, "list-pages", false, "list the URLs of the web's pages (answered 200) in the first line's \"pages\"")
	return cmd
}

// benchConfig is a crawl of the synthetic web at delay 0, a bare one, as
// the figures of docs/benchmarks.md measured: no gap, no requisites or
// rendering, no depth or per-host cap.
func benchConfig(info webInfo, dir string, workers int, maxPages int64) (crawl.Config, error) {
	return settings.Crawl(weft.Config{
		Seeds:          info.Seeds,
		DataDir:        dir,
		Workers:        workers,
		MaxPages:       maxPages,
		UserAgent:      defaultUserAgent(),
		ExpectedURLs:   uint(max(info.URLs, 1000)) * 2,
		Delay:          -1,
		NoRequisites:   true,
		RenderMode:     crawl.RenderNever,
		MaxDepth:       -1,
		MaxURLsPerHost: -1,
		Resolve:        info.Resolve,
		AllowNetworks:  []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
	})
}
