package synthweb

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// smallConfig is a web big enough to hold every RobotsKind of the default
// cycle (and then some) but quick to check exhaustively.
func smallConfig() Config {
	return Config{Seed: 42, Hosts: 16, PagesPerHost: 20}
}

// startWeb starts a web that is closed when the test ends.
func startWeb(t testing.TB, cfg Config) *Web {
	t.Helper()
	w, err := Start(cfg)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		if err := w.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return w
}

// newClient returns a client that reaches the web's hosts through the
// Resolve map (never DNS), does not follow redirects and does not ask for
// compression. Its idle connections are closed when the test ends.
func newClient(t testing.TB, w *Web) *http.Client {
	res := w.Resolve()
	var d net.Dialer
	tr := &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			host, port, err := net.SplitHostPort(addr)
			if err != nil {
				return nil, err
			}
			ip, ok := res[strings.ToLower(host)]
			if !ok {
				return nil, fmt.Errorf("test client: no address for %q", host)
			}
			return d.DialContext(ctx, network, net.JoinHostPort(ip, port))
		},
		MaxIdleConnsPerHost: 64,
		DisableCompression:  true,
	}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{
		Transport:     tr,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Timeout:       30 * time.Second,
	}
}

type response struct {
	status int
	header http.Header
	body   []byte
}

func get(t testing.TB, c *http.Client, url string) response {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: read body: %v", url, err)
	}
	return response{resp.StatusCode, resp.Header, b}
}

// hostOf returns the index of the first ordinary host with the given kind.
func hostOf(t testing.TB, w *Web, kind RobotsKind) HostInfo {
	t.Helper()
	for _, h := range w.Hosts() {
		if h.Hostile == "" && h.Robots == kind {
			return h
		}
	}
	t.Fatalf("no host with robots kind %v", kind)
	return HostInfo{}
}

func mustParse(t testing.TB, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// waitIdle waits until every logged request is complete.
func waitIdle(t testing.TB, w *Web) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := w.WaitIdle(ctx); err != nil {
		t.Fatal(err)
	}
}

// oneHostile starts a web of one ordinary host and one of kind, and
// returns a client, the hostile host's base URL (without its "/") and
// body, which gets a path of it and wants a 200.
func oneHostile(t *testing.T, seed int64, kind string) (c *http.Client, site string, body func(path string) string) {
	t.Helper()
	w := startWeb(t, Config{Seed: seed, Hosts: 1, PagesPerHost: 4, HostileKinds: []string{kind}})
	c = newClient(t, w)
	site = strings.TrimSuffix(w.HostileSeeds()[0], "/")
	return c, site, func(path string) string {
		t.Helper()
		r := get(t, c, site+path)
		if r.status != http.StatusOK {
			t.Fatalf("%s: %d", path, r.status)
		}
		return string(r.body)
	}
}
