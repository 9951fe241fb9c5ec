package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/netip"
	"os"
	"os/exec"
	"os/signal"
	"runtime/pprof"
	"strconv"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"weft/internal/crawl"
	"weft/internal/synthweb"
)

type benchFlags struct {
	hosts, pages, workers int
	maxPages              int64
	seed                  int64
	keep                  bool
	cpuProfile            string
}

// webInfo is what the synthweb child process tells its parent.
type webInfo struct {
	Seeds   []string          `json:"seeds"`
	Resolve map[string]string `json:"resolve"`
	URLs    int               `json:"urls"`
}

func newBenchCmd() *cobra.Command {
	var f benchFlags
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Crawl the synthetic web at delay 0 and report pages/s and CPU seconds per 1,000 pages",
		Long: `Runs the synthetic web in a child process (so its CPU is not charged to the
crawler), crawls it at delay 0 with full processing (robots.txt, parse,
canonicalise, seen set, WARC), and reports the crawler's wall-clock rate and
its own CPU time (user+system, from getrusage) per 1,000 pages. The per-host
rule still holds: one request in flight per host.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runBench(cmd, f) },
	}
	fs := cmd.Flags()
	fs.IntVar(&f.hosts, "hosts", 200, "hosts in the synthetic web")
	fs.IntVar(&f.pages, "pages-per-host", 100, "mean pages per host")
	fs.IntVar(&f.workers, "workers", 64, "concurrent fetches")
	fs.Int64Var(&f.maxPages, "max-pages", 20000, "pages to crawl (0: the whole web)")
	fs.Int64Var(&f.seed, "seed", 1, "seed of the synthetic web")
	fs.BoolVar(&f.keep, "keep", false, "keep the data directory")
	fs.StringVar(&f.cpuProfile, "cpuprofile", "", "write a CPU profile of the crawl to this file")
	return cmd
}

func runBench(cmd *cobra.Command, f benchFlags) error {
	out := cmd.OutOrStdout()
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	ctx := cmd.Context()
	child := exec.CommandContext(ctx, exe, "synthweb",
		"--hosts", strconv.Itoa(f.hosts), "--pages-per-host", strconv.Itoa(f.pages), "--seed", strconv.FormatInt(f.seed, 10))
	child.Stderr = cmd.ErrOrStderr()
	stdin, err := child.StdinPipe()
	if err != nil {
		return err
	}
	stdout, err := child.StdoutPipe()
	if err != nil {
		return err
	}
	if err := child.Start(); err != nil {
		return fmt.Errorf("bench: start synthetic web: %w", err)
	}
	var info webInfo
	if err := json.NewDecoder(bufio.NewReader(stdout)).Decode(&info); err != nil {
		child.Process.Kill()
		child.Wait()
		return fmt.Errorf("bench: synthetic web did not start: %w", err)
	}
	stopChild := func() time.Duration {
		stdin.Close() // the child exits when its stdin closes
		child.Wait()
		if child.ProcessState == nil {
			return 0
		}
		return child.ProcessState.UserTime() + child.ProcessState.SystemTime()
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
	cfg := benchConfig(info, dir, f.workers, f.maxPages)

	fmt.Fprintf(out, "weft bench: %d hosts, %d URLs, %d workers, delay 0, max %d pages\n", f.hosts, info.URLs, f.workers, f.maxPages)
	if f.cpuProfile != "" {
		stop, err := startCPUProfile(f.cpuProfile)
		if err != nil {
			return err
		}
		defer stop()
	}
	before := cpuTime()
	start := time.Now()
	sum, err := runCrawl(ctx, cfg, runOpts{progress: "never"}, io.Discard, cmd.ErrOrStderr())
	wall := time.Since(start)
	cpu := cpuTime() - before
	if err != nil {
		return err
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
	cmd := &cobra.Command{
		Use:    "synthweb",
		Short:  "Serve the synthetic web on loopback until stdin closes (used by bench)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			web, err := synthweb.Start(synthweb.Config{Seed: seed, Hosts: hosts, PagesPerHost: pages, MaxLatency: latency, RobotsKinds: benchRobotsKinds()})
			if err != nil {
				return err
			}
			defer web.Close()
			info := webInfo{Seeds: web.Seeds(), Resolve: web.Resolve(), URLs: len(web.AllPages())}
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
			return nil
		},
	}
	fs := cmd.Flags()
	fs.IntVar(&hosts, "hosts", 200, "hosts")
	fs.IntVar(&pages, "pages-per-host", 100, "mean pages per host")
	fs.Int64Var(&seed, "seed", 1, "seed")
	fs.DurationVar(&latency, "latency", 0, "most extra latency per host")
	return cmd
}

// benchConfig is a crawl of the synthetic web at delay 0.
func benchConfig(info webInfo, dir string, workers int, maxPages int64) crawl.Config {
	cfg := crawl.Config{
		Seeds:        info.Seeds,
		DataDir:      dir,
		Workers:      workers,
		MaxPages:     maxPages,
		UserAgent:    defaultUserAgent(),
		ExpectedURLs: uint(max(info.URLs, 1000)) * 2,
	}
	cfg.Fetch.Resolve = info.Resolve
	cfg.Fetch.AllowCIDRs = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	return cfg
}
