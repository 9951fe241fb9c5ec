package main

import (
	"cmp"
	"context"
	"fmt"
	"net/netip"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/weft-crawler/weft"
	"github.com/weft-crawler/weft/internal/crawl"
	"github.com/weft-crawler/weft/internal/settings"
	"github.com/weft-crawler/weft/internal/synthweb"
)

type demoFlags struct {
	hosts, pages, workers int
	seed                  int64
	delay                 time.Duration
	dataDir               string
	keep                  bool
	progress              string
}

func newDemoCmd() *cobra.Command {
	var f demoFlags
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Crawl a generated local web of many hosts and show what the crawler and the servers saw",
		Long: `Starts the synthetic web in this process (hosts on 127.0.1.x, each with its own
robots.txt: rules, Crawl-delay, 404, 5xx, a timeout, redirects; plus a gzip bomb,
an endless body and a silent server), crawls it with weft's defaults but a short
delay, prints the crawl summary and then audits politeness from the servers'
request log. Nothing leaves the machine.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runDemo(cmd, f)
		},
	}
	fs := cmd.Flags()
	fs.IntVar(&f.hosts, "hosts", 120, "hosts in the generated web")
	fs.IntVar(&f.pages, "pages-per-host", 25, "mean pages per host")
	fs.IntVar(&f.workers, "workers", 64, "concurrent fetches")
	fs.Int64Var(&f.seed, "seed", 1, "seed of the generated web")
	fs.DurationVar(&f.delay, "delay", 100*time.Millisecond, "least time between two requests to one host")
	fs.StringVar(&f.dataDir, "data", "", "where to write WARC files and the fetch log (default: a new temporary directory)")
	fs.BoolVar(&f.keep, "keep", false, "keep the temporary data directory")
	fs.StringVar(&f.progress, "progress", "auto", "live progress line: auto, always or never")
	return cmd
}

// demoHostile are the hostile hosts the demo crawls: those that cost a
// crawl little time. The slow ones (drips, hangs, storms) and the traps,
// which cost up to their caps, are in the end-to-end tests instead.
var demoHostile = []string{
	synthweb.HostileGzipBomb, synthweb.HostileEndless, synthweb.HostileSilent, synthweb.HostileCopies,
	synthweb.HostileHugeHeaders, synthweb.HostileMalformed, synthweb.HostileCharsets, synthweb.HostileBinary,
	synthweb.HostileReset, synthweb.HostileRedirectLoop, synthweb.HostileRedirectChain, synthweb.HostileHugeRobots,
}

func runDemo(cmd *cobra.Command, f demoFlags) error {
	out, errw := cmd.OutOrStdout(), cmd.ErrOrStderr()
	if f.hosts <= 0 || f.pages <= 0 || f.workers <= 0 {
		return usagef("--hosts, --pages-per-host and --workers must be positive")
	}
	web, err := synthweb.Start(demoWeb(f))
	if err != nil {
		return err
	}
	defer web.Close()

	dir := f.dataDir
	if dir == "" {
		if dir, err = os.MkdirTemp("", "weft-demo-"); err != nil {
			return err
		}
		if !f.keep {
			defer os.RemoveAll(dir)
		}
	}
	pages := len(web.AllPages())
	fmt.Fprintf(out, "weft demo: a generated web of %d hosts and %d URLs on loopback (plus %d hostile hosts), crawled with %d workers and a %v delay\n\n",
		f.hosts, pages, len(web.HostileSeeds()), f.workers, f.delay)

	cfg, err := demoConfig(web, dir, f.workers, f.delay)
	if err != nil {
		return err
	}
	if _, err := runCrawl(cmd.Context(), cfg, runOpts{progress: f.progress}, out, errw); err != nil {
		return err
	}
	fmt.Fprintln(out)
	// The crawler may read a response's last byte a moment before the
	// server's handler returns: let the log settle before judging it.
	idleCtx, cancel := context.WithTimeout(cmd.Context(), 10*time.Second)
	defer cancel()
	if err := web.WaitIdle(idleCtx); err != nil {
		return fmt.Errorf("demo: servers still busy after the crawl: %w", err)
	}
	audit := synthweb.Audit(web, f.delay)
	audit.Write(out)
	if !f.keep && f.dataDir == "" {
		fmt.Fprintln(out, "\n(the temporary data directory is removed; run with --keep or --data DIR to look at the WARC files)")
	}
	if !audit.OK() {
		return fmt.Errorf("the servers saw impolite requests")
	}
	return nil
}

// demoWeb is the demo's generated web.
func demoWeb(f demoFlags) synthweb.Config {
	return synthweb.Config{
		Seed: f.seed, Hosts: f.hosts, PagesPerHost: f.pages,
		MaxLatency: 20 * time.Millisecond, HostileKinds: demoHostile, HangLimit: 30 * time.Second,
	}
}

// demoConfig is a crawl of the synthetic web: every host name resolved to
// its loopback address, loopback allowed, short timeouts so the hostile
// hosts cost seconds, not minutes.
func demoConfig(web *synthweb.Web, dir string, workers int, delay time.Duration) (crawl.Config, error) {
	return settings.Crawl(weft.Config{
		Seeds:     append(web.Seeds(), web.HostileSeeds()...),
		DataDir:   dir,
		Workers:   workers,
		Delay:     cmp.Or(delay, -1), // --delay 0: no gap
		UserAgent: defaultUserAgent(),
		// The generated web is new on every run (new ports): a state left
		// in --data by an earlier demo describes a web that is gone.
		Fresh: true,
		// Its failing robots.txt files fail for good: judge them at the
		// first failure rather than retry them for minutes.
		RobotsAttempts: 1,
		// Each page's requisites (the photo each article shows) are
		// archived, as weft crawl does by default; no page is rendered,
		// so that the demo runs the same with or without Chromium on the
		// machine.
		RenderMode:    crawl.RenderNever,
		Resolve:       web.Resolve(),
		AllowNetworks: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
		MaxBodyBytes:  4 << 20,
		HeaderTimeout: 2 * time.Second,
		IdleTimeout:   2 * time.Second,
		Timeout:       10 * time.Second,
	})
}
