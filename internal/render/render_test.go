package render

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/weft-crawler/weft/internal/browsertest"
	"github.com/weft-crawler/weft/internal/testwait"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// connLog is a listener that records every TCP connection it accepts, not
// only the HTTP requests on them.
type connLog struct {
	net.Listener
	mu    sync.Mutex
	peers []string
}

func (l *connLog) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.mu.Lock()
		l.peers = append(l.peers, c.RemoteAddr().String())
		l.mu.Unlock()
	}
	return c, err
}

func (l *connLog) accepted() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.peers)
}

// serve starts an HTTP server on a loopback listener that logs its
// connections.
func serve(t *testing.T, h http.Handler) (*connLog, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cl := &connLog{Listener: ln}
	srv := &http.Server{Handler: h}
	done := make(chan struct{})
	go func() { defer close(done); srv.Serve(cl) }()
	t.Cleanup(func() { srv.Close(); <-done })
	return cl, "http://" + ln.Addr().String()
}

// testFetcher is a stand-in for the crawl's fetch path: it dials through
// a dialer that records the local address of every connection it opens,
// and refuses the forbidden authority before any dial.
type testFetcher struct {
	client    *http.Client
	forbidden string
	mu        sync.Mutex
	locals    map[string]bool
	asked     []string
}

func newTestFetcher(forbidden string) *testFetcher {
	f := &testFetcher{forbidden: forbidden, locals: map[string]bool{}}
	d := &net.Dialer{}
	f.client = &http.Client{
		Transport: &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := d.DialContext(ctx, network, addr)
			if err == nil {
				f.mu.Lock()
				f.locals[c.LocalAddr().String()] = true
				f.mu.Unlock()
			}
			return c, err
		}},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return f
}

func (f *testFetcher) Fetch(ctx context.Context, r Request) (*Response, error) {
	u, err := url.Parse(r.URL)
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	f.asked = append(f.asked, r.URL)
	f.mu.Unlock()
	if u.Host == f.forbidden {
		return nil, errors.New("forbidden address")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.URL, nil)
	if err != nil {
		return nil, err
	}
	resp, err := f.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	return &Response{Status: resp.StatusCode, Header: resp.Header, Body: body}, nil
}

func (f *testFetcher) dialed(peer string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.locals[peer]
}

// scriptSite is a page whose links are made by script only: inline, in
// an external file, from fetched JSON and behind a "Load more" button;
// and whose script tries a forbidden server by fetch, image and WebSocket.
func scriptSite(forbidden string) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><html><head><title>app</title><script src="/app.js"></script></head><body>
<noscript>This page needs JavaScript.</noscript>
<button id="more">Load more</button>
<script>
function add(href) { const a = document.createElement('a'); a.href = href; a.textContent = href; document.body.appendChild(a); }
add('/inline');
document.getElementById('more').addEventListener('click', () => add('/clicked'));
fetch('http://%[1]s/steal').catch(() => {});
new Image().src = 'http://%[1]s/pixel.png';
try { new WebSocket('ws://%[1]s/ws'); } catch (e) {}
</script></body></html>`, forbidden)
	})
	mux.HandleFunc("/app.js", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/javascript")
		io.WriteString(w, `document.addEventListener('DOMContentLoaded', () => {
	add('/external');
	fetch('/links.json').then(r => r.json()).then(ls => ls.forEach(add));
});`)
	})
	mux.HandleFunc("/links.json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `["/json-a", "/json-b"]`)
	})
	return mux
}

// newPool starts a pool for t, whose browsers keep their profiles in a
// directory of t's: once t is done and the pool closed, no process of the
// machine may name that directory, none of the browsers' processes left.
func newPool(t *testing.T, cfg Config) *Pool {
	t.Helper()
	cfg.Chromium = browsertest.Chromium(t)
	// Short: Chromium puts its sockets there, and a socket's path is
	// short (t.TempDir's, named for a subtest, may be too long).
	dir, err := os.MkdirTemp("", "wr")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	t.Setenv("TMPDIR", dir)
	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.Close()
		testwait.EventuallyNil(t, 10*time.Second, "every browser process gone", func() error { return processesNaming(dir) })
	})
	return p
}

// processesNaming says which processes have dir in their command line.
func processesNaming(dir string) error {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil // not Linux: nothing to look at
	}
	var left []string
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err == nil && bytes.Contains(b, []byte(dir)) {
			left = append(left, e.Name()+": "+strings.ReplaceAll(string(b[:min(len(b), 120)]), "\x00", " "))
		}
	}
	if len(left) > 0 {
		return fmt.Errorf("%d processes left: %q", len(left), left)
	}
	return nil
}

// Every connection the site receives is one the Fetcher opened; the
// forbidden server receives none, though the page's script tries it three
// ways; and the settled DOM has every link the scripts made.
func TestRenderEveryConnectionIsTheFetchers(t *testing.T) {
	forbiddenLog, forbiddenURL := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "secret") }))
	forbidden := forbiddenURL[len("http://"):]
	siteLog, site := serve(t, scriptSite(forbidden))
	f := newTestFetcher(forbidden)
	p := newPool(t, Config{Workers: 1, Timeout: 20 * time.Second, Idle: 300 * time.Millisecond, MaxClicks: 3, Log: slog.New(slog.NewTextHandler(t.Output(), nil))})
	res, err := p.Render(t.Context(), site+"/", f)
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	for _, path := range []string{"/inline", "/external", "/json-a", "/json-b", "/clicked"} {
		if !slices.Contains(res.Links, site+path) {
			t.Errorf("links %q lack %s", res.Links, site+path)
		}
	}
	if res.Clicks != 1 {
		t.Errorf("clicks = %d, want 1", res.Clicks)
	}
	if got := forbiddenLog.accepted(); len(got) != 0 {
		t.Errorf("the forbidden server accepted %d connections: %v", len(got), got)
	}
	if !slices.Contains(f.asked, "http://"+forbidden+"/steal") {
		t.Errorf("the script's fetch of the forbidden server never reached the Fetcher (asked %q)", f.asked)
	}
	if res.Refused == 0 {
		t.Errorf("no request refused: %+v", res)
	}
	peers := siteLog.accepted()
	if len(peers) == 0 {
		t.Fatal("the site accepted no connection")
	}
	for _, peer := range peers {
		if !f.dialed(peer) {
			t.Errorf("the site accepted a connection from %s, which the Fetcher did not open", peer)
		}
	}
	if !bytesContains(res.DOM, `href="/json-b"`) {
		t.Errorf("the DOM lacks the script-made link: %.400s", res.DOM)
	}
	// The script's WebSocket, which interception does not see, died at
	// the dead-end proxy, counted as the page's; whatever else came
	// there was the browser's own.
	testwait.Eventually(t, 10*time.Second, "the page's WebSocket counted as the page's at the dead-end proxy", func() bool { return p.DeadEnds().Pages > 0 })
	d := p.DeadEnds()
	t.Logf("requests %d, refused %d, dead ends %+v, connections %d", res.Requests, res.Refused, d, len(peers))
}

// The dead-end proxy tells a page's connection (to a host a page or its
// requests named) from the browser's own (to any other host), and does
// not count a connection that sent nothing as a refused request.
func TestDeadEndsTellPagesFromTheBrowser(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Pool{cfg: Config{Log: slog.New(slog.DiscardHandler)}, sink: ln, named: map[string]struct{}{}, conns: map[string]int64{}}
	p.wg.Go(p.drop)
	defer func() { ln.Close(); p.wg.Wait() }()
	p.name("http://site.test:8080/docs/")
	p.name("ws://chat.site.test/socket")
	send := func(line string) {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if line != "" {
			io.WriteString(c, line+"\r\n\r\n")
		}
	}
	for _, line := range []string{
		"CONNECT chat.site.test:80 HTTP/1.1",
		"GET http://SITE.test:8080/ws HTTP/1.1",
		"CONNECT accounts.google.com:443 HTTP/1.1",
		"CONNECT accounts.google.com:443 HTTP/1.1",
		"GET http://clients2.google.com/time/1/current HTTP/1.1",
		"",
	} {
		send(line)
	}
	testwait.Eventually(t, 10*time.Second, "six dead-end connections counted", func() bool {
		d := p.DeadEnds()
		return d.Pages+d.Browser+d.Silent == 6
	})
	want := DeadEnds{Pages: 2, Browser: 3, Targets: []string{"accounts.google.com:443", "clients2.google.com:80"}, Silent: 1}
	if d := p.DeadEnds(); !reflect.DeepEqual(d, want) {
		t.Errorf("dead ends %+v, want %+v", d, want)
	}
}

func bytesContains(b []byte, s string) bool { return strings.Contains(string(b), s) }
