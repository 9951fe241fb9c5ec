package crawl

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"

	"github.com/weft-crawler/weft/internal/synthweb"
	"github.com/weft-crawler/weft/internal/testwait"
)

// crashChildEnv, when set, makes the test binary a crawler process (see
// TestMain): the crash test starts it, kills it with SIGKILL and starts it
// again over the same data directory.
const crashChildEnv = "WEFT_CRASH_CHILD"

type crashChildConfig struct {
	Seeds   []string
	Resolve map[string]string
	DataDir string
	Delay   time.Duration
	Workers int
}

// runCrashChild runs one crawl as configured by the environment, then exits:
// 0 when it drained, 1 on error.
func runCrashChild() {
	var cc crashChildConfig
	if err := json.Unmarshal([]byte(os.Getenv(crashChildEnv)), &cc); err != nil {
		fmt.Fprintln(os.Stderr, "crash child:", err)
		os.Exit(2)
	}
	cfg := bare(Config{Seeds: cc.Seeds, DataDir: cc.DataDir, Workers: cc.Workers, Delay: cc.Delay, UserAgent: "weft/test (+https://example.org/weft-crawler)"})
	// The web's failing robots.txt answers 503 with Retry-After: 3600, and
	// is retried: the crawl would rightly wait hours to finish. Cap the
	// waits.
	cfg.Politeness.MaxRetryAfter = time.Second
	cfg.RobotsRetryWait = 100 * time.Millisecond
	cfg.Fetch.Resolve = cc.Resolve
	cfg.Fetch.AllowCIDRs = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	cfg.Fetch.ResponseHeaderTimeout = 3 * time.Second
	cfg.Fetch.Timeout = 10 * time.Second
	c, err := New(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "crash child:", err)
		os.Exit(1)
	}
	sum, err := c.Run(context.Background())
	if err != nil {
		fmt.Fprintln(os.Stderr, "crash child:", err)
		os.Exit(1)
	}
	fmt.Printf("%s %d pages resumed=%v queued-at-start=%d\n", sum.StoppedBy, sum.Pages, sum.Resumed, sum.ResumedQueue)
	os.Exit(0)
}

// TestSurvivesKillNine crawls the synthetic web in a child process, kills it
// with SIGKILL at random moments and restarts it over the same data
// directory, then judges the whole crawl from the servers' log: every
// reachable allowed page fetched, none more than twice, refetches bounded by
// the leases that can have been out at the kills, and per-host politeness
// intact across the restarts.
func TestSurvivesKillNine(t *testing.T) {
	t.Parallel() // its crawler runs in child processes: this process mostly waits
	if testing.Short() {
		t.Skip("starts and kills crawler processes")
	}
	const (
		delay   = 50 * time.Millisecond
		workers = 4
		kills   = 12
	)
	web := startWeb(t, synthweb.Config{
		Seed: 77, Hosts: 30, PagesPerHost: 40,
		MinPageBytes: 12 << 10, MaxPageBytes: 16 << 10, MinLinks: 20, MaxLinks: 30,
		MaxLatency: 5 * time.Millisecond, CrawlDelay: 100 * time.Millisecond, HangLimit: 10 * time.Second,
	})
	cc := crashChildConfig{Seeds: web.Seeds(), Resolve: web.Resolve(), DataDir: t.TempDir(), Delay: delay, Workers: workers}
	env, _ := json.Marshal(cc)
	rng := rand.New(rand.NewPCG(1, 2))

	start := func() (*exec.Cmd, *strings.Builder) {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), crashChildEnv+"="+string(env))
		var out strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd, &out
	}
	killed, kills9 := 0, 0
	var killTimes [][2]time.Time // each kill, from its signal to the child's exit
	for killed < kills {
		cmd, out := start()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		// Kill at a random moment, measured in progress rather than time
		// so that every run gets past the leases the previous kill left
		// out (which come first on their hosts' queues) however slow the
		// machine: after 20 to 60 page requests of this run, plus up to
		// 100 ms. A lease out at two kills in a row would be fetched three
		// times.
		before := len(web.Log())
		target := 20 + rng.IntN(41)
		var deadline time.Time
		finished := false
		for !finished {
			select {
			case err := <-done: // finished before the kill
				if err != nil {
					t.Fatalf("crawler run %d failed: %v\n%s", killed+1, err, out)
				}
				t.Logf("run %d finished before its kill: %s", killed+1, strings.TrimSpace(out.String()))
				finished = true
				continue
			case <-time.After(5 * time.Millisecond):
			}
			if deadline.IsZero() {
				pages := 0
				for _, r := range web.Log()[before:] {
					if !isRobotsPath(r.Path) {
						pages++
					}
				}
				if pages >= target {
					deadline = time.Now().Add(time.Duration(rng.IntN(100)) * time.Millisecond)
				}
			} else if time.Now().After(deadline) {
				break
			}
		}
		if finished {
			killed = kills
			continue
		}
		sent := time.Now()
		cmd.Process.Kill() // SIGKILL
		<-done
		// A request the child sent before the signal took it is logged
		// by the server after sent: the kill spans until its exit.
		killTimes = append(killTimes, [2]time.Time{sent, time.Now()})
		killed++
		kills9++
	}
	if kills9 < 10 {
		t.Fatalf("only %d kills before the crawl finished; the test needs at least 10", kills9)
	}
	cmd, out := start()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("final run failed: %v\n%s", err, out)
		}
	case <-time.After(2 * time.Minute):
		cmd.Process.Kill()
		<-done
		t.Fatalf("final run did not finish\n%s", out)
	}
	t.Logf("final run: %s", strings.TrimSpace(out.String()))
	if !strings.HasPrefix(out.String(), "drained") {
		t.Fatalf("final run did not drain: %s", out)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if err := web.WaitIdle(ctx); err != nil {
		t.Fatal(err)
	}

	audit := synthweb.Audit(web, delay)
	for _, s := range audit.Breaches() {
		t.Errorf("politeness across restarts: %s", s)
	}
	for _, s := range audit.RobotsNotFirst {
		t.Errorf("robots.txt not first: %s", s)
	}
	fetched := pageRequests(web) // robots.txt is fetched again by each run
	twice, want := 0, 0
	for _, p := range web.AllPages() {
		if !shouldFetch(p) {
			continue
		}
		want++
		switch n := fetched[p.URL]; {
		case n == 0:
			t.Errorf("%s (%s) never fetched: lost in a crash", p.URL, p.Role)
		case n == 2:
			twice++
		case n > 2:
			// More than one extra fetch: each must follow a kill that
			// came while the fetch before it was out (two kills can land
			// in one URL's leases on a loaded machine; no fetch may come
			// again without one).
			var starts []time.Time
			for _, r := range web.Log() {
				if strings.HasSuffix(p.URL, r.Path) && strings.Contains(p.URL, "//"+r.Host+"/") {
					starts = append(starts, r.Start)
				}
			}
			slices.SortFunc(starts, func(a, b time.Time) int { return a.Compare(b) })
			for i := 1; i < len(starts); i++ {
				explained := false
				for _, k := range killTimes {
					if !k[1].Before(starts[i-1]) && !k[0].After(starts[i]) {
						explained = true
					}
				}
				if !explained {
					var kt []string
					for _, k := range killTimes {
						kt = append(kt, k[0].Format("05.000")+"-"+k[1].Format("05.000"))
					}
					t.Errorf("%s fetched %d times; fetch %d at %s follows no kill since the one before (%s); kills at %v",
						p.URL, n, i+1, starts[i].Format("05.000"), starts[i-1].Format("05.000"), kt)
				}
			}
			twice++
		}
	}
	// A URL is fetched again only if its lease was out at a kill: at most
	// one per worker per kill.
	if twice > kills9*workers {
		t.Errorf("%d URLs fetched twice; at most %d leases can have been out at %d kills", twice, kills9*workers, kills9)
	}
	t.Logf("%d kills: %d reachable pages all fetched, %d of them twice", kills9, want, twice)
}

// A disk that fails under the crawl state stops the crawl with an error
// naming the state directory; once the disk is healthy again, the crawl
// resumes from what was committed and finishes, losing nothing.
func TestStoreWriteErrorStopsThenResumes(t *testing.T) {
	web := startWeb(t, synthweb.Config{
		Seed: 78, Hosts: 10, PagesPerHost: 12,
		MinPageBytes: 12 << 10, MaxPageBytes: 16 << 10, MinLinks: 20, MaxLinks: 30,
		RobotsKinds: []synthweb.RobotsKind{synthweb.RobotsRules, synthweb.RobotsNotFound},
	})
	cfg := testConfig(t, web, 8, 10*time.Millisecond)
	fault := &errorfs.Toggle{Injector: errorfs.InjectorFunc(func(op errorfs.Op) error {
		// Writes of the write-ahead log fail: every commit of the crawl
		// state needs one.
		if op.Kind.ReadOrWrite() == errorfs.OpIsWrite && strings.HasSuffix(op.Path, ".log") {
			return errorfs.ErrInjected
		}
		return nil
	})}
	cfg.StoreFS = errorfs.Wrap(vfs.Default, fault)
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		sum Summary
		err error
	}
	ran := make(chan result, 1)
	go func() {
		sum, err := c.Run(t.Context())
		ran <- result{sum, err}
	}()
	testwait.Eventually(t, time.Minute, "20 pages crawled", func() bool { return c.Progress().Pages >= 20 })
	fault.On()
	r := <-ran
	sum, err := r.sum, r.err
	if err == nil || sum.StoppedBy != "failed" {
		t.Fatalf("crawl %s with error %v; want it failed by the disk", sum.StoppedBy, err)
	}
	if !errors.Is(err, errorfs.ErrInjected) || !strings.Contains(err.Error(), filepath.Join(cfg.DataDir, "state")) {
		t.Errorf("error %q should wrap the disk's and name the state directory", err)
	}
	t.Logf("stopped: %v after %d pages", err, sum.Pages)

	cfg.StoreFS = nil // the disk is healthy again
	sum2 := runCrawl(t, cfg)
	if !sum2.Resumed || sum2.StoppedBy != "drained" {
		t.Fatalf("second run: resumed %v, %s", sum2.Resumed, sum2.StoppedBy)
	}
	fetched := pageRequests(web)
	for _, p := range web.AllPages() {
		if shouldFetch(p) && fetched[p.URL] == 0 {
			t.Errorf("%s never fetched: lost to the disk error", p.URL)
		}
	}
}
