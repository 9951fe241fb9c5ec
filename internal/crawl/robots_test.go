package crawl

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weft-crawler/weft/internal/judge"
)

// A robots.txt that redirects to another host: the hop is that host's
// request, made under its clock after its own robots.txt, and the rules
// found there apply to the first host.
func TestRobotsRedirectToAnotherHost(t *testing.T) {
	const delay = 150 * time.Millisecond
	mw := newMiniWeb(t, map[string]func(*miniWeb, http.ResponseWriter, *http.Request){
		"a.test": func(w *miniWeb, rw http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/robots.txt":
				http.Redirect(rw, r, w.url("b.test", "/rules-for-a.txt"), http.StatusMovedPermanently)
			case "/":
				page(rw, "/open", "/private/secret")
			default:
				page(rw)
			}
		},
		"b.test": func(w *miniWeb, rw http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/robots.txt":
				robotsFile(rw, "User-agent: *\nDisallow: /nothing-here/\n")
			case "/rules-for-a.txt":
				robotsFile(rw, "User-agent: *\nDisallow: /private/\n")
			case "/":
				page(rw, "/b1", "/b2")
			default:
				page(rw)
			}
		},
	})
	sum := runCrawl(t, mw.config(t, delay, mw.url("a.test", "/"), mw.url("b.test", "/")))
	mw.checkPolite(t, delay)
	a := mw.paths("a.test")
	if slices.Contains(a, "/private/secret") {
		t.Errorf("a.test: fetched /private/secret, which the redirected robots.txt disallows (requests %v)", a)
	}
	if !slices.Contains(a, "/open") {
		t.Errorf("a.test: /open not fetched (requests %v)", a)
	}
	if b := mw.paths("b.test"); !slices.Contains(b, "/rules-for-a.txt") || len(b) != 5 {
		t.Errorf("b.test requests %v; want robots.txt, the hop for a.test, / and two pages", b)
	}
	if sum.RobotsHops != 1 || sum.Robots["rules"] != 2 {
		t.Errorf("robots %v, %d hops; want both hosts with rules, one hop", sum.Robots, sum.RobotsHops)
	}
}

// A robots.txt that redirects to a path its target host disallows: the hop
// is not made, and the first host is treated as unreachable.
func TestRobotsRedirectToDisallowedPath(t *testing.T) {
	mw := newMiniWeb(t, map[string]func(*miniWeb, http.ResponseWriter, *http.Request){
		"a.test": func(w *miniWeb, rw http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/robots.txt" {
				http.Redirect(rw, r, w.url("b.test", "/private/secret"), http.StatusFound)
				return
			}
			page(rw, "/x")
		},
		"b.test": func(w *miniWeb, rw http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/robots.txt" {
				robotsFile(rw, "User-agent: *\nDisallow: /private/\n")
				return
			}
			page(rw)
		},
	})
	cfg := mw.config(t, 50*time.Millisecond, mw.url("a.test", "/"))
	sum := runCrawl(t, cfg)
	mw.checkPolite(t, 50*time.Millisecond)
	mw.checkRobotsRetries(t, "a.test", cfg)
	if got := mw.paths("b.test"); slices.Contains(got, "/private/secret") {
		t.Errorf("b.test requests %v: the disallowed hop was fetched", got)
	}
	if sum.HostsDown["redirect-disallowed"] != 1 {
		t.Errorf("hosts down %v; want a.test counted as redirect-disallowed", sum.HostsDown)
	}
}

// Two hosts whose robots.txt files redirect to each other's pages must not
// wait on each other forever.
func TestRobotsRedirectCycleEnds(t *testing.T) {
	mw := newMiniWeb(t, map[string]func(*miniWeb, http.ResponseWriter, *http.Request){
		"a.test": func(w *miniWeb, rw http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/robots.txt" {
				http.Redirect(rw, r, w.url("b.test", "/r"), http.StatusFound)
				return
			}
			page(rw)
		},
		"b.test": func(w *miniWeb, rw http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/robots.txt" {
				http.Redirect(rw, r, w.url("a.test", "/r"), http.StatusFound)
				return
			}
			page(rw)
		},
	})
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	c, err := New(mw.config(t, 10*time.Millisecond, mw.url("a.test", "/"), mw.url("b.test", "/")))
	if err != nil {
		t.Fatal(err)
	}
	sum, err := c.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if sum.StoppedBy != "drained" {
		t.Fatalf("crawl %s: a robots.txt redirect cycle hung it", sum.StoppedBy)
	}
	mw.checkPolite(t, 10*time.Millisecond)
}

// A link to the robots.txt of a host whose robots.txt failed must not
// probe it again as a page.
func TestLinkToRobotsTxtIsNotFetchedAsPage(t *testing.T) {
	mw := newMiniWeb(t, map[string]func(*miniWeb, http.ResponseWriter, *http.Request){
		"a.test": func(w *miniWeb, rw http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/robots.txt" {
				http.NotFound(rw, r)
				return
			}
			page(rw, w.url("b.test", "/robots.txt"), w.url("b.test", "/"))
		},
		"b.test": func(w *miniWeb, rw http.ResponseWriter, r *http.Request) {
			http.Error(rw, "down", http.StatusServiceUnavailable)
		},
	})
	cfg := mw.config(t, 10*time.Millisecond, mw.url("a.test", "/"), mw.url("b.test", "/"))
	runCrawl(t, cfg)
	mw.checkRobotsRetries(t, "b.test", cfg)
}

// A robots.txt whose gzip body is cut short could have lost its Disallow
// lines: the host is treated as unreachable, not crawled on partial rules.
func TestUndecodableRobotsTxtDisallowsAll(t *testing.T) {
	var zipped bytes.Buffer
	zw := gzip.NewWriter(&zipped)
	zw.Write([]byte("User-agent: *\nAllow: /\n" + strings.Repeat("# padding line to push the rule out\n", 200) + "Disallow: /private/\n"))
	zw.Close()
	half := zipped.Bytes()[:zipped.Len()/2]
	mw := newMiniWeb(t, map[string]func(*miniWeb, http.ResponseWriter, *http.Request){
		"a.test": func(w *miniWeb, rw http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/robots.txt" {
				rw.Header().Set("Content-Encoding", "gzip")
				rw.Header().Set("Content-Type", "text/plain")
				rw.Write(half)
				return
			}
			page(rw, "/private/secret")
		},
	})
	cfg := mw.config(t, 10*time.Millisecond, mw.url("a.test", "/"))
	sum := runCrawl(t, cfg)
	n := mw.checkRobotsRetries(t, "a.test", cfg)
	if sum.Robots["disallow-all"] != int64(n) || len(sum.Robots) != 1 {
		t.Errorf("robots outcomes %v; want %d failures", sum.Robots, n)
	}
}

// A restart reads each host's robots.txt answer from the store instead of
// asking the host again, and goes on obeying it.
func TestRestartKeepsRobots(t *testing.T) {
	mw := newMiniWeb(t, map[string]func(*miniWeb, http.ResponseWriter, *http.Request){
		"a.test": func(w *miniWeb, rw http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/robots.txt":
				robotsFile(rw, "User-agent: *\nDisallow: /private\n")
			case "/":
				page(rw, "/one", "/two", "/private/x")
			default:
				page(rw, "/private/y")
			}
		},
		"down.test": func(w *miniWeb, rw http.ResponseWriter, r *http.Request) {
			http.Error(rw, "down", http.StatusInternalServerError)
		},
	})
	cfg := mw.config(t, 10*time.Millisecond, mw.url("a.test", "/"), mw.url("down.test", "/"), mw.url("down.test", "/b"))
	cfg.MaxPages = 1 // robots.txt of both hosts, a.test/ only; the rest stays queued
	if sum := runCrawl(t, cfg); sum.StoppedBy != "max-pages" {
		t.Fatalf("first run %s", sum.StoppedBy)
	}
	cfg.MaxPages = 0
	if sum := runCrawl(t, cfg); sum.StoppedBy != "drained" || !sum.Resumed {
		t.Fatalf("second run %s, resumed %v", sum.StoppedBy, sum.Resumed)
	}
	// down.test's 5xx is retried; its failures are counted across the
	// restart, so it is given up after as many attempts as in one run.
	if got := mw.paths("down.test"); len(got) != cfg.RobotsAttempts {
		t.Errorf("down.test requests %v; want robots.txt %d times in both runs", got, cfg.RobotsAttempts)
	}
	mw.checkRobotsRetries(t, "down.test", cfg)
	for host, want := range map[string][]string{
		"a.test": {"/robots.txt", "/", "/one", "/two"},
	} {
		got := mw.paths(host)
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s requests %v, want %v", host, got, want)
		}
	}
}

// A robots.txt that fails twice and then answers: the host's URLs wait for
// it (none is lost), each retry after the wait, and its rules then apply.
func TestRobotsRetriedUntilItAnswers(t *testing.T) {
	var robotsAsked atomic.Int32
	mw := newMiniWeb(t, map[string]func(*miniWeb, http.ResponseWriter, *http.Request){
		"a.test": func(w *miniWeb, rw http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/robots.txt":
				if robotsAsked.Add(1) <= 2 {
					http.Error(rw, "busy", http.StatusServiceUnavailable)
					return
				}
				robotsFile(rw, "User-agent: *\nDisallow: /private\n")
			case "/":
				page(rw, "/one", "/private/x")
			default:
				page(rw)
			}
		},
	})
	cfg := mw.config(t, 10*time.Millisecond, mw.url("a.test", "/"))
	cfg.Politeness.MinBackoff = 10 * time.Millisecond // a 503's backoff, which also holds the retry
	sum := runCrawl(t, cfg)
	mw.checkPolite(t, 10*time.Millisecond)
	want := []string{"/robots.txt", "/robots.txt", "/robots.txt", "/", "/one"}
	if got := mw.paths("a.test"); !slices.Equal(got, want) {
		t.Fatalf("a.test requests %v, want %v", got, want)
	}
	reqs := mw.requests("a.test")
	for k := 1; k <= 2; k++ {
		if gap, wait := reqs[k].start.Sub(reqs[k-1].start), cfg.RobotsRetryWait<<(k-1); gap < wait {
			t.Errorf("robots.txt attempt %d started %v after the one before; want at least %v", k+1, gap, wait)
		}
	}
	if sum.RobotsRetries != 2 || len(sum.HostsDown) != 0 {
		t.Errorf("%d robots.txt retries, hosts down %v; want 2 and none", sum.RobotsRetries, sum.HostsDown)
	}
}

// A robots.txt that answers once and then fails for good, while the crawl
// of its host goes on past the answer's TTL. By RFC 9309 the host is then
// completely disallowed and its remaining URLs dropped; with Google's rule
// (RobotsLastGood) the last good copy goes on being used, and obeyed.
func TestRobotsLastGoodCopy(t *testing.T) {
	const chain = 12
	run := func(t *testing.T, lastGood time.Duration) (*miniWeb, Summary) {
		var robotsAsked atomic.Int32
		mw := newMiniWeb(t, map[string]func(*miniWeb, http.ResponseWriter, *http.Request){
			"a.test": func(w *miniWeb, rw http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/robots.txt" {
					if robotsAsked.Add(1) == 1 {
						robotsFile(rw, "User-agent: *\nDisallow: /private\n")
						return
					}
					http.Error(rw, "down", http.StatusInternalServerError)
					return
				}
				// A chain of pages, each also linking a disallowed one.
				n, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/p/"))
				page(rw, fmt.Sprintf("/p/%d", n+1), fmt.Sprintf("/private/%d", n))
			},
		})
		cfg := mw.config(t, 50*time.Millisecond, mw.url("a.test", "/p/1"))
		cfg.Scope.MaxDepth = chain - 1 // /p/1 .. /p/chain
		cfg.RobotsTTL = 200 * time.Millisecond
		cfg.RobotsLastGood = lastGood
		sum := runCrawl(t, cfg)
		mw.checkPolite(t, 50*time.Millisecond)
		for _, p := range mw.paths("a.test") {
			if strings.HasPrefix(p, "/private") {
				t.Errorf("fetched %s, which the last good robots.txt disallows", p)
			}
		}
		return mw, sum
	}
	pages := func(mw *miniWeb) int {
		n := 0
		for _, p := range mw.paths("a.test") {
			if strings.HasPrefix(p, "/p/") {
				n++
			}
		}
		return n
	}
	t.Run("rfc", func(t *testing.T) {
		mw, sum := run(t, 0)
		if n := pages(mw); n >= chain {
			t.Errorf("%d of %d pages fetched; want the chain cut where robots.txt became unreachable", n, chain)
		}
		if sum.HostsDown["robots.txt 5xx"] != 1 || sum.RobotsLastGood != 0 {
			t.Errorf("hosts down %v, %d last-good uses; want a.test down", sum.HostsDown, sum.RobotsLastGood)
		}
	})
	t.Run("google", func(t *testing.T) {
		mw, sum := run(t, time.Hour)
		if n := pages(mw); n != chain {
			t.Errorf("%d of %d pages fetched; want all, by the last good copy", n, chain)
		}
		if sum.RobotsLastGood == 0 || len(sum.HostsDown) != 0 {
			t.Errorf("%d last-good uses, hosts down %v; want some and none", sum.RobotsLastGood, sum.HostsDown)
		}
	})
}

// Google's rule across a restart: the last good robots.txt, fetched by an
// earlier run, stands in for a file that now fails, so its body must have
// survived the failures recorded since.
func TestRobotsLastGoodSurvivesRestart(t *testing.T) {
	var robotsAsked atomic.Int32
	mw := newMiniWeb(t, map[string]func(*miniWeb, http.ResponseWriter, *http.Request){
		"a.test": func(w *miniWeb, rw http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/robots.txt":
				if robotsAsked.Add(1) == 1 {
					robotsFile(rw, "User-agent: *\nDisallow: /private\n")
					return
				}
				http.Error(rw, "down", http.StatusInternalServerError)
			case "/":
				page(rw, "/one", "/two", "/private/x")
			default:
				page(rw, "/private/y")
			}
		},
	})
	cfg := mw.config(t, 10*time.Millisecond, mw.url("a.test", "/"))
	cfg.MaxPages = 1 // robots.txt and / only; /one and /two stay queued
	runCrawl(t, cfg)
	// The stored answer goes stale: fetched again, and failing three times,
	// the good copy is used for /one; the failures are stored.
	cfg.RobotsTTL = 50 * time.Millisecond
	cfg.RobotsLastGood = time.Hour
	time.Sleep(2 * cfg.RobotsTTL)
	first := runCrawl(t, cfg)
	// A third run reads the failures and the good copy from the store.
	cfg.MaxPages = 0
	sum := runCrawl(t, cfg)
	sum.RobotsLastGood += first.RobotsLastGood
	got := mw.paths("a.test")
	if len(got) < 7 || !slices.Equal(got[:5], []string{"/robots.txt", "/", "/robots.txt", "/robots.txt", "/robots.txt"}) ||
		!slices.Contains(got, "/one") || !slices.Contains(got, "/two") {
		t.Errorf("a.test requests %v; want robots.txt and / in the first run, then three failed robots.txt and /one and /two (after a restart) by the last good copy", got)
	}
	for _, p := range got {
		if strings.HasPrefix(p, "/private") {
			t.Errorf("fetched %s, which the last good robots.txt disallows", p)
		}
	}
	if sum.RobotsLastGood == 0 {
		t.Errorf("the last good copy was never used: %+v", sum)
	}
}

// A host whose robots.txt asks for a Crawl-delay longer than the crawl
// waits (MaxCrawlDelay, a minute by default) is not crawled: after its
// robots.txt it gets no request, its queued URLs are dropped and the links
// to it refused, the summary names it, and a crawl that ends does so at
// once rather than an hour a page later. A resumed crawl judges it so
// from the kept file, without asking again. With a negative MaxCrawlDelay
// the Crawl-delay is honoured in full.
func TestCrawlDelayOverTheMost(t *testing.T) {
	var slow atomic.Value
	slow.Store("3600")
	mw := newMiniWeb(t, map[string]func(*miniWeb, http.ResponseWriter, *http.Request){
		"slow.test": func(w *miniWeb, rw http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/robots.txt":
				robotsFile(rw, "User-agent: *\nCrawl-delay: "+slow.Load().(string)+"\n")
			case "/":
				page(rw, "/s1", "/s2")
			default:
				page(rw)
			}
		},
		"fast.test": func(w *miniWeb, rw http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/robots.txt":
				robotsFile(rw, "User-agent: *\nDisallow: /private/\n")
			case "/":
				page(rw, "/f1", w.url("slow.test", "/s3"))
			case "/f1":
				page(rw, "/f2", w.url("slow.test", "/s4"))
			default:
				page(rw)
			}
		},
	})
	const delay = 20 * time.Millisecond
	run := func(cfg Config) Summary {
		t.Helper()
		sum := runCrawlWithin(t, cfg, time.Minute)
		if sum.StoppedBy != "drained" {
			t.Fatalf("crawl %s; want it drained, not waiting on the slow host's Crawl-delay (slow.test requests %v)", sum.StoppedBy, mw.paths("slow.test"))
		}
		return sum
	}
	cfg := mw.config(t, delay, mw.url("slow.test", "/"), mw.url("fast.test", "/"))
	sum := run(cfg)
	mw.checkPolite(t, delay)
	if got := mw.paths("slow.test"); !slices.Equal(got, []string{"/robots.txt"}) {
		t.Errorf("slow.test requests %v; want its robots.txt alone", got)
	}
	if got := mw.paths("fast.test"); len(got) != 4 {
		t.Errorf("fast.test requests %v; want robots.txt and its three pages", got)
	}
	if sum.HostsDown[judge.CrawlDelay] != 1 || len(sum.HostsDownNamed) != 1 || !strings.Contains(sum.HostsDownNamed[0].Err, "Crawl-delay 1h0m0s") {
		t.Errorf("hosts down %v %+v; want slow.test named for its Crawl-delay", sum.HostsDown, sum.HostsDownNamed)
	}
	// The seed, and the two links found on fast.test: dropped when leased
	// or refused when found, whichever came first.
	if n := sum.Rejected[judge.CrawlDelay]; n != 3 {
		t.Errorf("%d URLs refused for the Crawl-delay (rejected %v); want 3", n, sum.Rejected)
	}
	if len(sum.SeedFailures) != 1 || sum.SeedFailures[0].Reason != judge.CrawlDelay || !strings.Contains(sum.SeedFailures[0].Detail, "Crawl-delay 1h0m0s") ||
		sum.SeedFailures[0].Hint != "--max-crawl-delay 0" {
		t.Errorf("seed failures %+v; want the slow seed, its Crawl-delay and what would let it be fetched", sum.SeedFailures)
	}
	var out bytes.Buffer
	sum.Write(&out)
	if !strings.Contains(out.String(), "crawl-delay: Crawl-delay 1h0m0s is longer than the crawl waits for a host (1m0s)") {
		t.Errorf("the summary does not say why slow.test was not crawled:\n%s", &out)
	}

	// Resumed, with a new URL of the slow host: the kept robots.txt
	// decides, and the host gets no request.
	cfg.Seeds = []string{mw.url("slow.test", "/new")}
	sum = run(cfg)
	if got := mw.paths("slow.test"); len(got) != 1 {
		t.Errorf("slow.test requests %v after the resumed crawl; want none more", got)
	}
	if sum.Rejected[judge.CrawlDelay] != 1 || sum.HostsDown[judge.CrawlDelay] != 1 {
		t.Errorf("resumed: rejected %v, hosts down %v; want the new URL refused for the Crawl-delay, and its host named", sum.Rejected, sum.HostsDown)
	}

	// Honoured in full when the crawl waits for any Crawl-delay.
	slow.Store("0.3")
	cfg = mw.config(t, delay, mw.url("slow.test", "/"))
	cfg.MaxCrawlDelay = -1
	before := len(mw.requests("slow.test"))
	run(cfg)
	reqs := mw.requests("slow.test")[before:]
	if len(reqs) != 4 {
		t.Fatalf("slow.test requests %d with no most Crawl-delay; want robots.txt and its three pages", len(reqs))
	}
	for i := 1; i < len(reqs); i++ {
		if gap := reqs[i].start.Sub(reqs[i-1].end); gap < 300*time.Millisecond {
			t.Errorf("slow.test: %s started %v after %s ended; its Crawl-delay is 0.3 s", reqs[i].path, gap, reqs[i-1].path)
		}
	}
}
