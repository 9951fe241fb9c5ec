package crawl

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A page with more links than MaxLinksPerPage is read up to the cap; it is
// logged with its URL at the default log level (warn) and counted per
// host, in the summary and in the metrics. Pages under the cap are not.
func TestLinkCapLogsAndCountsCutPages(t *testing.T) {
	mw := newMiniWeb(t, map[string]func(*miniWeb, http.ResponseWriter, *http.Request){
		"index.test": func(w *miniWeb, rw http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/robots.txt":
				http.NotFound(rw, r)
			case "/":
				page(rw, append(numbered("/l/", 12), "/genindex")...)
			case "/genindex":
				page(rw, numbered("/g/", 30)...)
			default:
				page(rw)
			}
		},
		"small.test": func(w *miniWeb, rw http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/robots.txt":
				http.NotFound(rw, r)
			case "/":
				page(rw, numbered("/s/", 10)...)
			default:
				page(rw)
			}
		},
	})
	var logs syncBuffer
	cfg := mw.config(t, time.Millisecond, mw.url("index.test", "/"), mw.url("small.test", "/"))
	cfg.MaxLinksPerPage = 10
	cfg.Scope.Mode = "host"
	cfg.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := c.Run(t.Context())
	if err != nil {
		t.Fatal(err)
	}

	// "/" reads /l/0 ... /l/9 and stops before /genindex.
	got := mw.paths("index.test")
	if slices.Contains(got, "/l/10") || slices.Contains(got, "/genindex") || !slices.Contains(got, "/l/9") {
		t.Errorf("index.test requests %v: want /l/0 to /l/9 only, the links past the cap unread", got)
	}
	if n := len(mw.paths("small.test")); n != 12 {
		t.Errorf("small.test: %d requests, want robots.txt, / and its 10 links", n)
	}
	index := mw.auth["index.test"]
	if sum.LinksCut != 1 || len(sum.LinksCutHosts) != 1 || sum.LinksCutHosts[index] != 1 {
		t.Errorf("summary: %d pages cut, per host %v; want 1, on %s", sum.LinksCut, sum.LinksCutHosts, index)
	}
	if m := c.Metrics(); m.LinksCut != 1 || !slices.Equal(m.LinksCutHosts, []HostPages{{Host: index, Pages: 1}}) {
		t.Errorf("metrics: %d pages cut, hosts %v", m.LinksCut, m.LinksCutHosts)
	}
	var out bytes.Buffer
	sum.Write(&out)
	if !strings.Contains(out.String(), "links cut:  1 pages") || !strings.Contains(out.String(), index+" 1") {
		t.Errorf("the printed summary does not say which host had a page cut:\n%s", out.String())
	}
	var cut []string
	for line := range strings.Lines(logs.String()) {
		if strings.Contains(line, "link cap") {
			cut = append(cut, line)
		}
	}
	if len(cut) != 1 || !strings.Contains(cut[0], "url="+mw.url("index.test", "/")) || !strings.Contains(cut[0], "links=10") {
		t.Errorf("log lines about the cap %q; want one naming %s", cut, mw.url("index.test", "/"))
	}
}

// BenchmarkIndexPage crawls one page, an index of 60,000 links to
// distinct pages (about 7 MiB), with the link cap at the old default
// (10,000) and the new one (50,000): one op starts a crawl, fetches the
// page, reads its links and admits them all (canonicalised, judged,
// recorded as seen and queued on disk), and stops. The difference between
// the two is what the higher cap costs per such page. (A real index links
// mostly to anchors of fewer pages, which costs less: a link to a URL
// already seen is not written.)
func BenchmarkIndexPage(b *testing.B) {
	var body bytes.Buffer
	body.WriteString("<!DOCTYPE html><html><head><title>Index</title></head><body><dl>\n")
	for i := range 60000 {
		fmt.Fprintf(&body, "<dt><a href=\"library/module%d/function_%d.html\"><code>function_%d()</code></a> (in module module%d)</dt>\n", i%997, i, i, i%997)
	}
	body.WriteString("</dl></body></html>\n")
	ln, err := net.Listen("tcp", "127.0.0.8:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(rw, r)
			return
		}
		rw.Header().Set("Content-Type", "text/html")
		rw.Write(body.Bytes())
	})}
	done := make(chan struct{})
	go func() { defer close(done); srv.Serve(ln) }()
	defer func() { srv.Close(); <-done }()
	seed := "http://docs.test:" + strconv.Itoa(ln.Addr().(*net.TCPAddr).Port) + "/"

	for _, max := range []int{10000, DefaultMaxLinksPerPage} {
		b.Run(fmt.Sprintf("max=%d", max), func(b *testing.B) {
			b.ReportAllocs()
			var queued int
			for b.Loop() {
				cfg := bare(Config{Seeds: []string{seed}, DataDir: b.TempDir(), Workers: 1, MaxPages: 1, MaxLinksPerPage: max, NoSitemaps: true, MaxURLsPerPattern: -1,
					UserAgent: "weft/test (+https://example.org/weft-crawler)"})
				cfg.Fetch.Resolve = map[string]string{"docs.test": "127.0.0.8"}
				cfg.Fetch.Resolver = noDNS{}
				cfg.Fetch.AllowCIDRs = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
				c, err := New(cfg)
				if err != nil {
					b.Fatal(err)
				}
				sum, err := c.Run(context.Background())
				if err != nil || sum.Pages != 1 {
					b.Fatalf("%d pages, %v", sum.Pages, err)
				}
				queued = sum.Queued
			}
			b.ReportMetric(float64(queued), "queued")
		})
	}
}
