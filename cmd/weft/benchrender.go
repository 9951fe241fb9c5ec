package main

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"

	"github.com/weft-crawler/weft/internal/bytesize"
	"github.com/weft-crawler/weft/internal/fetch"
	"github.com/weft-crawler/weft/internal/render"
	"github.com/weft-crawler/weft/internal/synthweb"
)

type renderBenchFlags struct {
	pages, workers int
	chromium       string
	memory         int64
	timeout        time.Duration
}

func newBenchRenderCmd() *cobra.Command {
	var f renderBenchFlags
	cmd := &cobra.Command{
		Use:   "render",
		Short: "Render a script-built page over and over in a pool of headless Chromium, and report pages/s and RSS per browser",
		Long: `Starts the synthetic web's script app (a page whose links only its scripts
make: inline, from an external file, from fetched JSON, behind a click)
and renders it --pages times with --workers browsers, each request of each
page made by weft's own fetcher (the SSRF guard, caps) with no politeness
delay, so that the figure is the browsers' cost, not the host's clock.
Every render must find the app's five script-made links, the one behind
a click included.
It samples each browser's resident memory (its whole process tree) every
200ms and reports pages/s, the peak and mean RSS per browser, and the
connections outside interception refused at the dead-end proxy: the
pages' (a WebSocket) and Chromium's own calls home, with where they went.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runBenchRender(cmd, f) },
	}
	fs := cmd.Flags()
	fs.IntVar(&f.pages, "pages", 200, "renders in all")
	fs.IntVar(&f.workers, "workers", 2, "browsers at once")
	fs.StringVar(&f.chromium, "chromium", "", "the Chromium executable (default: chromium on the PATH)")
	fs.Var(bytesize.NewValue(&f.memory, 512<<20), "memory", "each browser's JavaScript heap cap, in whole MiB")
	fs.DurationVar(&f.timeout, "timeout", 30*time.Second, "each page's budget")
	return cmd
}

// benchFetcher makes a rendering page's requests with weft's fetcher.
type benchFetcher fetch.Fetcher

func (b *benchFetcher) Fetch(ctx context.Context, r render.Request) (*render.Response, error) {
	if r.Method != "GET" {
		return nil, errors.New("GET only")
	}
	resp, err := (*fetch.Fetcher)(b).Get(ctx, r.URL, nil)
	if err != nil {
		return nil, err
	}
	if resp.Truncated != "" {
		return nil, errors.New("cut by a cap")
	}
	return &render.Response{Status: resp.StatusCode, Header: resp.Header, Body: resp.Decoded}, nil
}

func runBenchRender(cmd *cobra.Command, f renderBenchFlags) error {
	out := cmd.OutOrStdout()
	if f.pages <= 0 || f.workers <= 0 {
		return usagef("--pages and --workers must be positive")
	}
	if err := checkHeap("--memory", f.memory); err != nil {
		return err
	}
	web, err := synthweb.Start(synthweb.Config{Seed: 1, Hosts: 1, PagesPerHost: 12, HostileKinds: []string{synthweb.ScriptApp}})
	if err != nil {
		return err
	}
	defer web.Close()
	fetcher, err := fetch.New(fetch.Config{UserAgent: "weft-bench (+https://example.org/weft-crawler)", Resolve: web.Resolve(),
		AllowCIDRs: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}})
	if err != nil {
		return err
	}
	defer fetcher.Close()
	pool, err := render.New(render.Config{Chromium: f.chromium, Workers: f.workers, Timeout: f.timeout, Idle: 200 * time.Millisecond, MaxClicks: 1, MemoryMB: int(f.memory >> 20)})
	if err != nil {
		return err
	}
	defer pool.Close()
	app := web.HostileSeeds()[0]
	want := make([]string, len(synthweb.ScriptAppLinks))
	for i, p := range synthweb.ScriptAppLinks {
		want[i] = strings.TrimSuffix(app, "/") + p
	}

	var (
		next, done, failed, requests atomic.Int64
		mu                           sync.Mutex
		peak                         []int64
		sum                          []int64
		samples                      int64
		firstErr                     error
	)
	sample := func() {
		rss := pool.RSS()
		mu.Lock()
		defer mu.Unlock()
		for len(peak) < len(rss) {
			peak, sum = append(peak, 0), append(sum, 0)
		}
		slices.Sort(rss)
		for i, v := range rss {
			peak[i] = max(peak[i], v)
		}
		if len(rss) == f.workers {
			// The mean is of samples with every browser alive only, so
			// that each sum has as many terms as samples counts.
			for i, v := range rss {
				sum[i] += v
			}
			samples++
		}
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				sample()
			}
		}
	})
	// Warm up: start every browser before the clock runs.
	var warm sync.WaitGroup
	for range f.workers {
		warm.Go(func() { _, _ = pool.Render(cmd.Context(), app, (*benchFetcher)(fetcher)) })
	}
	warm.Wait()
	start := time.Now()
	var workers sync.WaitGroup
	for range f.workers {
		workers.Go(func() {
			for next.Add(1) <= int64(f.pages) {
				res, err := pool.Render(cmd.Context(), app, (*benchFetcher)(fetcher))
				requests.Add(int64(res.Requests))
				if err == nil {
					for _, w := range want {
						if !slices.Contains(res.Links, w) {
							err = fmt.Errorf("render of %s lacks %s", app, w)
							break
						}
					}
				}
				if err != nil {
					failed.Add(1)
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
					continue
				}
				done.Add(1)
			}
		})
	}
	workers.Wait()
	elapsed := time.Since(start)
	close(stop)
	wg.Wait()
	sample()
	mu.Lock()
	defer mu.Unlock()
	fmt.Fprintf(out, "bench render: %d pages rendered (%d failed) with %d browsers in %v: %.1f pages/s, %.1f requests a page through weft's fetcher\n",
		done.Load(), failed.Load(), f.workers, elapsed.Round(time.Millisecond), float64(done.Load())/elapsed.Seconds(), float64(requests.Load())/float64(max(done.Load()+failed.Load(), 1)))
	for i := range peak {
		mean := int64(0)
		if samples > 0 {
			mean = sum[i] / samples
		}
		fmt.Fprintf(out, "  browser %d (by size): memory peak %s, mean %s (PSS of its whole process tree)\n", i+1, byteMB(peak[i]), byteMB(mean))
	}
	d := pool.DeadEnds()
	fmt.Fprintf(out, "  browsers started %d, replaced %d; refused at the dead-end proxy: %d connections of the pages outside interception, %d of Chromium's own (%s)\n",
		pool.Started(), pool.Restarts(), d.Pages, d.Browser, strings.Join(d.Targets, ", "))
	if firstErr != nil {
		return fmt.Errorf("bench render: %d renders failed, the first: %w", failed.Load(), firstErr)
	}
	return nil
}

func byteMB(n int64) string { return fmt.Sprintf("%.0f MB", float64(n)/(1<<20)) }
