package main

import (
	"bytes"
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
	"github.com/spf13/pflag"

	"github.com/weft-crawler/weft/internal/crawl"
	"github.com/weft-crawler/weft/internal/synthweb"
)

type hostsBenchFlags struct {
	hosts, workers, listeners, hubs int
	hostCache                       int
	seed                            int64
	keep                            bool
	memProfile                      string
	memProfileAt                    int
	every                           time.Duration
}

// hostsWebInfo is what the synthhosts child process tells its parent.
type hostsWebInfo struct {
	Port       int      `json:"port"`
	Addrs      []string `json:"addrs"`
	Seeds      []string `json:"seeds"`
	Hosts      int      `json:"hosts"`
	PagesInWeb int64    `json:"pages_in_web"`
}

// hostsMilestones are the hosts reached at which memory is sampled.
var hostsMilestones = []int{1_000, 10_000, 100_000, 1_000_000, 10_000_000}

func newBenchHostsCmd() *cobra.Command {
	var f hostsBenchFlags
	cmd := &cobra.Command{
		Use:   "hosts",
		Short: "Crawl a web of a million small hosts and report the crawler's memory as hosts accumulate",
		Long: `Runs a web of --hosts hosts in a child process, all served by name on a few
loopback addresses (h<i>.bench.test, resolved by the crawler without a
table), and crawls it with weft crawl's default flags but --delay 0 and
--workers: robots.txt, one request in flight per host, parse, seen set,
WARC. Each host has a robots.txt of 50 to 100 rules in three groups and 2
to 5 pages that link to each other, to two paths the robots.txt
disallows, and to other hosts; the seeds are the home pages of four hubs,
and the crawl discovers every other host through links.

Every few seconds it prints a progress line with the hosts reached and
the crawler's resident memory. At 1k, 10k, 100k and 1M hosts reached
(robots.txt asked for) it samples the resident set (VmRSS), its peak so
far (VmHWM) and the Go heap in use, and it reports them with pages/s and
CPU ms per page. The web's own counters say whether every host's
robots.txt and pages were fetched, and whether any disallowed path was
asked for or any host got two requests at once.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runBenchHosts(cmd, f) },
	}
	fs := cmd.Flags()
	fs.IntVar(&f.hosts, "hosts", 1_000_000, "hosts in the web")
	fs.IntVar(&f.workers, "workers", 64, "concurrent fetches")
	fs.IntVar(&f.listeners, "listeners", 4, "loopback addresses the web listens on (127.0.0.1 up)")
	fs.IntVar(&f.hubs, "hubs", 4, "hosts whose home pages are the seeds")
	fs.IntVar(&f.hostCache, "host-cache", 0, "the crawl's --host-cache (0: its default)")
	fs.Int64Var(&f.seed, "seed", 1, "seed of the web")
	fs.BoolVar(&f.keep, "keep", false, "keep the data directory")
	fs.StringVar(&f.memProfile, "memprofile", "", "write a heap profile to this file when --memprofile-at hosts are reached (or at the end)")
	fs.IntVar(&f.memProfileAt, "memprofile-at", 100_000, "hosts reached when the heap profile is written")
	fs.DurationVar(&f.every, "progress-every", 5*time.Second, "how often a progress line is printed on stderr")
	return cmd
}

// memSample is the process's memory at one moment.
type memSample struct {
	RSS, HWM, Heap uint64 // bytes: VmRSS, VmHWM, Go heap objects in use
}

// readMem reads VmRSS and VmHWM from /proc/self/status and the Go heap in
// use from the runtime.
func readMem() memSample {
	var m memSample
	if b, err := os.ReadFile("/proc/self/status"); err == nil {
		for _, line := range bytes.Split(b, []byte("\n")) {
			k, v, ok := bytes.Cut(line, []byte(":"))
			if !ok {
				continue
			}
			var dst *uint64
			switch string(k) {
			case "VmRSS":
				dst = &m.RSS
			case "VmHWM":
				dst = &m.HWM
			default:
				continue
			}
			f := bytes.Fields(v)
			if len(f) > 0 {
				if kb, err := strconv.ParseUint(string(f[0]), 10, 64); err == nil {
					*dst = kb << 10
				}
			}
		}
	}
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	m.Heap = s[0].Value.Uint64()
	return m
}

func mib(b uint64) float64 { return float64(b) / (1 << 20) }

// milestone is the crawl at the moment a number of hosts was reached.
type milestone struct {
	label   string
	hosts   int64
	elapsed time.Duration
	pages   int64
	mem     memSample
}

func (m milestone) String() string {
	return fmt.Sprintf("%.0f MiB now, peak %.0f MiB, Go heap %.0f MiB, at %d hosts, %d pages, %v",
		mib(m.mem.RSS), mib(m.mem.HWM), mib(m.mem.Heap), m.hosts, m.pages, m.elapsed.Round(time.Second))
}

func hostsLabel(n int) string {
	switch {
	case n >= 1_000_000 && n%1_000_000 == 0:
		return strconv.Itoa(n/1_000_000) + "M"
	case n >= 1_000 && n%1_000 == 0:
		return strconv.Itoa(n/1_000) + "k"
	}
	return strconv.Itoa(n)
}

// hostsStats asks the child web for its counters.
type hostsStats struct {
	client *http.Client
	url    string
}

func (h hostsStats) get(ctx context.Context) (synthweb.HostsSummary, error) {
	var s synthweb.HostsSummary
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, h.url, nil)
	if err != nil {
		return s, err
	}
	req.Host = synthweb.HostsStatsHost
	resp, err := h.client.Do(req)
	if err != nil {
		return s, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return s, fmt.Errorf("bench hosts: %s: status %d", h.url, resp.StatusCode)
	}
	return s, json.NewDecoder(resp.Body).Decode(&s)
}

func runBenchHosts(cmd *cobra.Command, f hostsBenchFlags) error {
	out, errOut := cmd.OutOrStdout(), cmd.ErrOrStderr()
	// The web's zero values mean its defaults; on the command line a
	// zero is a mistake.
	if f.hosts < 1 || f.listeners < 1 || f.hubs < 1 {
		return usagef("--hosts %d, --listeners %d, --hubs %d: each must be at least 1", f.hosts, f.listeners, f.hubs)
	}
	if err := (synthweb.HostsConfig{Hosts: f.hosts, Listeners: f.listeners, Hubs: f.hubs}).Validate(); err != nil {
		return usagef("--hosts %d, --listeners %d, --hubs %d: %v", f.hosts, f.listeners, f.hubs, err)
	}
	if f.workers < 1 || f.every <= 0 {
		return usagef("--workers %d and --progress-every %v must be positive", f.workers, f.every)
	}
	if f.hostCache < 0 {
		return usagef("--host-cache %d: must be 0 (the crawl's default) or more", f.hostCache)
	}
	ctx := cmd.Context()
	var info hostsWebInfo
	web, err := startWebChild("bench hosts", []string{"synthhosts", "--hosts", strconv.Itoa(f.hosts),
		"--listeners", strconv.Itoa(f.listeners), "--hubs", strconv.Itoa(f.hubs), "--seed", strconv.FormatInt(f.seed, 10)}, errOut, &info)
	if err != nil {
		return err
	}
	defer web.stop(nil)
	var addrs []netip.Addr
	for _, a := range info.Addrs {
		ip, err := netip.ParseAddr(a)
		if err != nil {
			return fmt.Errorf("bench hosts: the web gave address %q: %w", a, err)
		}
		addrs = append(addrs, ip)
	}
	statsClient := &http.Client{Timeout: 10 * time.Second}
	defer statsClient.CloseIdleConnections()
	stats := hostsStats{client: statsClient, url: "http://" + netip.AddrPortFrom(addrs[0], uint16(info.Port)).String() + "/stats"}

	dir, err := os.MkdirTemp("", "weft-bench-hosts-")
	if err != nil {
		return err
	}
	if !f.keep {
		defer os.RemoveAll(dir)
	}
	cfg, limit, err := hostsCrawlConfig(info, addrs, dir, f.workers, f.hostCache, errOut)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "weft bench hosts: %d hosts (%d pages) on %d listeners, %d workers, delay 0, seed %d, Go memory limit %d MiB, in %s\n",
		info.Hosts, info.PagesInWeb, len(addrs), f.workers, f.seed, limit>>20, dir)
	c, err := crawl.New(cfg)
	if err != nil {
		return err
	}

	var (
		mu         sync.Mutex
		marks      []milestone
		profileErr error
		profiled   bool
	)
	writeProfile := func() {
		runtime.GC()
		pf, err := os.Create(f.memProfile)
		if err == nil {
			err = pprof.WriteHeapProfile(pf)
			if cerr := pf.Close(); err == nil {
				err = cerr
			}
		}
		profileErr, profiled = err, true
	}
	start := time.Now()
	before := cpuTime()
	sctx, stopSampler := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		next := 0
		lastPrint := start
		var lastPages int64
		for {
			select {
			case <-sctx.Done():
				return
			case now := <-tick.C:
				s, err := stats.get(sctx)
				if err != nil {
					if sctx.Err() == nil {
						fmt.Fprintf(errOut, "bench hosts: the web's counters: %v\n", err)
					}
					continue
				}
				p := c.Progress()
				m := readMem()
				mu.Lock()
				for next < len(hostsMilestones) && s.HostsRobots >= int64(hostsMilestones[next]) {
					mk := milestone{label: hostsLabel(hostsMilestones[next]), hosts: s.HostsRobots,
						elapsed: now.Sub(start), pages: p.Pages, mem: m}
					marks = append(marks, mk)
					// Said at once too: a crawl that outgrows the machine
					// may never print its report.
					fmt.Fprintf(errOut, "%-15s%s\n", "RSS "+mk.label, mk.String())
					next++
				}
				if f.memProfile != "" && !profiled && s.HostsRobots >= int64(f.memProfileAt) {
					writeProfile()
				}
				mu.Unlock()
				if now.Sub(lastPrint) >= f.every {
					rate := float64(p.Pages-lastPages) / now.Sub(lastPrint).Seconds()
					lastPrint, lastPages = now, p.Pages
					fmt.Fprintf(errOut, "%6s  hosts %d of %d (%d complete)  pages %d  %.0f/s  queued %d  hosts ready %d waiting %d  RSS %.0f MiB  peak %.0f MiB  Go heap %.0f MiB\n",
						now.Sub(start).Round(time.Second), s.HostsRobots, s.Hosts, s.HostsComplete, p.Pages, rate, p.Queued,
						p.HostsReady, p.HostsWaiting, mib(m.RSS), mib(m.HWM), mib(m.Heap))
				}
			}
		}
	})
	sum, runErr := c.Run(ctx)
	stopSampler()
	wg.Wait()
	wall := time.Since(start)
	cpu := cpuTime() - before
	end := readMem()
	if runErr != nil {
		return runErr
	}
	// An interrupted bench still reports how far it got.
	served, err := stats.get(context.WithoutCancel(ctx))
	if err != nil {
		return fmt.Errorf("bench hosts: the web's counters at the end: %w", err)
	}
	if f.memProfile != "" && !profiled {
		writeProfile()
	}
	if profileErr != nil {
		return fmt.Errorf("bench hosts: --memprofile %s: %w", f.memProfile, profileErr)
	}
	marks = append(marks, milestone{label: "end", hosts: served.HostsRobots, elapsed: wall, pages: sum.Pages, mem: end})

	pages := float64(max(sum.Pages, 1))
	fmt.Fprintf(out, "%-15s%s\n", "stopped by", sum.StoppedBy)
	fmt.Fprintf(out, "%-15s%d of %d (their robots.txt asked for)\n", "hosts reached", served.HostsRobots, served.Hosts)
	fmt.Fprintf(out, "%-15s%d (every page answered)\n", "hosts complete", served.HostsComplete)
	fmt.Fprintf(out, "%-15s%d (the web's count; %d in the web, %d asked for again)\n", "pages served", served.Pages, served.PagesInWeb, served.Repeats)
	fmt.Fprintf(out, "%-15s%d (robots.txt %d, disallowed %d, other %d)\n", "requests", served.Requests, served.Robots, served.Disallowed, served.Other)
	fmt.Fprintf(out, "%-15s%d (robots.txt requests beyond one per host reached)\n", "robots again", served.Robots-served.HostsRobots)
	fmt.Fprintf(out, "%-15s%d (requests to a host with another in flight)\n", "overlaps", served.Overlaps)
	fmt.Fprintf(out, "%-15s%d (the crawler's count, robots.txt not included)\n", "pages", sum.Pages)
	fmt.Fprintf(out, "%-15s%v\n", "wall", wall.Round(time.Millisecond))
	fmt.Fprintf(out, "%-15s%.0f\n", "pages/s", pages/wall.Seconds())
	fmt.Fprintf(out, "%-15s%.2f s (%.2f cores)\n", "crawler CPU", cpu.Seconds(), cpu.Seconds()/wall.Seconds())
	fmt.Fprintf(out, "%-15s%.3f\n", "CPU ms/page", cpu.Seconds()*1000/pages)
	fmt.Fprintf(out, "%-15s%.0f MiB (VmHWM)\n", "peak RSS", mib(end.HWM))
	for _, m := range marks {
		fmt.Fprintf(out, "%-15s%s\n", "RSS "+m.label, m.String())
	}
	fmt.Fprintln(out, "the crawl's summary:")
	sum.Write(out)
	return nil
}

// hostsCrawlConfig is weft crawl's configuration with its default flags,
// but --delay 0, --workers, --host-cache if not 0 and an --expected-urls
// the size of the web, with the web's resolver and loopback allowed. It
// applies the default --memory-limit, as weft crawl would, and returns the
// Go heap limit that set (0: none, GOMEMLIMIT rules).
func hostsCrawlConfig(info hostsWebInfo, addrs []netip.Addr, dir string, workers, hostCache int, stderr io.Writer) (crawl.Config, int64, error) {
	var cf crawlFlags
	cf.register(pflag.NewFlagSet("defaults", pflag.ContinueOnError))
	cf.dataDir = dir
	cf.delay = 0
	cf.workers = workers
	if hostCache > 0 {
		cf.hostCache = hostCache
	}
	cf.progress = "never"
	// Each page is 1 URL and links to 2 disallowed ones: size the seen
	// set for them, as an operator would for a crawl this big.
	cf.expectedURLs = max(cf.expectedURLs, uint(info.PagesInWeb)*3)
	cfg, err := cf.config(info.Seeds, stderr)
	if err != nil {
		return cfg, 0, err
	}
	cfg.Fetch.Resolver = synthweb.HostsResolver{Addrs: addrs, Hosts: info.Hosts}
	cfg.Fetch.AllowCIDRs = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	limit, err := applyMemoryLimit(cf.memoryLimit)
	return cfg, limit, err
}

// newSynthHostsCmd serves a synthweb.HostsWeb until its stdin closes;
// bench hosts runs it as a child process, so that the web's memory and
// CPU are not the crawler's. It prints one JSON line: port, addresses,
// seeds and size.
func newSynthHostsCmd() *cobra.Command {
	var cfg synthweb.HostsConfig
	cmd := &cobra.Command{
		Use:    "synthhosts",
		Short:  "Serve a web of many small hosts by name on loopback until stdin closes (used by bench hosts)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			web, err := synthweb.StartHosts(cfg)
			if err != nil {
				return err
			}
			defer web.Close()
			s := web.Summary()
			info := hostsWebInfo{Port: web.Port(), Seeds: web.Seeds(), Hosts: s.Hosts, PagesInWeb: s.PagesInWeb}
			for _, a := range web.Addrs() {
				info.Addrs = append(info.Addrs, a.String())
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
			return nil
		},
	}
	fs := cmd.Flags()
	fs.IntVar(&cfg.Hosts, "hosts", 1_000_000, "hosts")
	fs.IntVar(&cfg.Listeners, "listeners", 4, "listening addresses")
	fs.IntVar(&cfg.Hubs, "hubs", 4, "hosts whose home pages are the seeds")
	fs.Int64Var(&cfg.Seed, "seed", 1, "seed")
	return cmd
}
