package weft_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weft-crawler/weft"
)

// A handler that fails or panics on a page is counted under its name and
// the crawl goes on, reading the other pages; the links a handler gives
// are followed; a consumer is given each page with where it is archived.
func TestHandlerFailuresAreCounted(t *testing.T) {
	srv := site()
	defer srv.Close()
	cfg := config(srv, t.TempDir())
	cfg.Handlers = []weft.Handler{
		weft.HandlerFunc("flaky", func(r *weft.Response) (weft.Result, error) {
			switch {
			case strings.HasSuffix(r.URL, "/p/1"):
				return weft.Result{}, errors.New("no luck")
			case strings.HasSuffix(r.URL, "/p/2"):
				panic("boom")
			}
			return weft.Result{Links: []string{"/hidden"}, Fields: map[string]any{"home": true}}, nil
		}, "text/*"),
	}
	var mu sync.Mutex
	pages := map[string]*weft.Page{}
	cfg.Consumers = []weft.Consumer{weft.ConsumerFunc(func(p *weft.Page) error {
		mu.Lock()
		defer mu.Unlock()
		pages[strings.TrimPrefix(p.URL, srv.URL)] = p
		return nil
	})}
	sum, err := runCrawl(t, cfg)
	if err != nil || sum.StoppedBy != "drained" {
		t.Fatalf("Run: %v, %s", err, sum.StoppedBy)
	}
	if sum.HandlerFailed["flaky"] != 2 || sum.Handled["flaky"] != 3 {
		t.Errorf("handled %v, failed %v; want 3 read (/ and the products: not the 404 /hidden), 2 failed", sum.Handled, sum.HandlerFailed)
	}
	if p := pages["/hidden"]; p == nil || p.Status != 404 {
		t.Errorf("the handler's link /hidden was not fetched: %v", p)
	}
	home := pages["/"]
	if home == nil || home.Fields["home"] != true || !slices.Contains(home.Links, srv.URL+"/p/1") || !home.Read {
		t.Fatalf("home page %+v: want its fields, links and Read", home)
	}
	if p1 := pages["/p/1"]; p1 == nil || p1.Fields != nil {
		t.Errorf("/p/1: %+v; the failed handler's result must be dropped", p1)
	}
	if home.Record.File == "" || home.Record.Length <= 0 || !strings.HasPrefix(home.Record.ID, "<urn:uuid:") {
		t.Errorf("home page's record %+v", home.Record)
	}
	var files []string
	for _, f := range sum.WARCFiles {
		files = append(files, filepath.Base(f))
	}
	if !slices.Contains(files, home.Record.File) {
		t.Errorf("record in %s, not among the WARC files %v", home.Record.File, files)
	}
}

// A consumer's error stops the crawl, and Run returns it.
func TestConsumerErrorStopsTheCrawl(t *testing.T) {
	srv := site()
	defer srv.Close()
	cfg := config(srv, t.TempDir())
	full := errors.New("disk full")
	cfg.Consumers = []weft.Consumer{weft.ConsumerFunc(func(*weft.Page) error { return full })}
	c, err := weft.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := c.Run(context.Background())
	if !errors.Is(err, full) || sum.StoppedBy != "failed" {
		t.Errorf("Run: %v, stopped by %s; want the consumer's error, failed", err, sum.StoppedBy)
	}
	// Once run, the Crawler holds nothing of its crawl, which the caller's
	// keeping it must not keep in memory; a second Run is refused, as is
	// Run on a Crawler New did not make.
	if !reflect.ValueOf(c).Elem().IsZero() {
		t.Error("after Run, the Crawler still holds its crawl")
	}
	if _, err := c.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "Run called twice") {
		t.Errorf("a second Run: %v, want it refused", err)
	}
	if _, err := new(weft.Crawler).Run(context.Background()); err == nil {
		t.Error("Run on a Crawler New did not make should be refused")
	}
}

// A filter that names every URL differently cannot grow the counts
// without bound, and bad configurations are refused naming the field.
func TestFilterReasonsBoundedAndConfigChecked(t *testing.T) {
	srv := site()
	defer srv.Close()
	cfg := config(srv, t.TempDir())
	cfg.Filters = []weft.LinkFilter{weft.LinkFilterFunc(func(l weft.Link) string { return "r-" + l.URL })}
	sum, err := runCrawl(t, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Rejected) > 64 || sum.Rejected["r-"+srv.URL+"/p/1"] != 1 {
		t.Errorf("rejections %v", sum.Rejected)
	}
	for _, tc := range []struct {
		mod  func(*weft.Config)
		want string
	}{
		{func(c *weft.Config) { c.Handlers = []weft.Handler{nil} }, "Handlers[0] is nil"},
		{func(c *weft.Config) { c.Filters = []weft.LinkFilter{nil} }, "Filters[0] is nil"},
		{func(c *weft.Config) { c.UserAgent = "" }, "user agent is required"},
		{func(c *weft.Config) { c.Seeds = []string{"ftp://a.test/"} }, `seed "ftp://a.test/"`},
		{func(c *weft.Config) {
			h := weft.HandlerFunc("x", nil, "text/html")
			c.Handlers = []weft.Handler{h, h}
		}, `Handlers[0] and Handlers[1] are both named "x"`},
	} {
		cfg := config(srv, t.TempDir())
		tc.mod(&cfg)
		if _, err := weft.New(cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error %v, want one containing %q", err, tc.want)
		}
	}
}

// A program of the command protocol is a Handler of the public API too:
// the Python example's fields reach the consumers.
func TestCommandHandler(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("python3 is needed for the Python example")
		}
		t.Skip("no python3")
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		if r.URL.Path == "/" {
			fmt.Fprint(w, `<h1 class="title">Kettle &amp; Co</h1><p class="price"><span class="amount">12.50</span></p>`)
			return
		}
		http.NotFound(w, r)
	}))
	defer srv.Close()
	py, err := weft.NewCommand(weft.CommandConfig{Argv: []string{"python3", "examples/products-py/products.py"}, MediaTypes: []string{"text/html"}})
	if err != nil {
		t.Fatal(err)
	}
	defer py.Close()
	cfg := config(srv, t.TempDir())
	cfg.Handlers = []weft.Handler{py}
	var fields map[string]any
	cfg.Consumers = []weft.Consumer{weft.ConsumerFunc(func(p *weft.Page) error {
		if p.URL == srv.URL+"/" {
			fields = p.Fields
		}
		return nil
	})}
	sum, err := runCrawl(t, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if fields["title"] != "Kettle & Co" || fields["price"] != "12.50" || sum.Handled["python3"] != 1 {
		t.Errorf("fields %v, handled %v", fields, sum.Handled)
	}
}

// A Summary as JSON has snake_case keys, as weft crawl --summary and the
// operator API write them, and Elapsed in seconds.
func TestSummaryJSONKeys(t *testing.T) {
	b, err := json.Marshal(weft.Summary{StoppedBy: "drained", Elapsed: 2500 * time.Millisecond, Pages: 3, HandlerFailed: map[string]int64{"x": 1}, WARCFiles: []string{"a"}})
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if m["stopped_by"] != "drained" || m["elapsed_seconds"] != 2.5 || m["pages"] != 3.0 || m["handler_failed"] == nil || m["warc_files"] == nil {
		t.Errorf("summary as JSON: %s", b)
	}
	for key := range m {
		if strings.ToLower(key) != key {
			t.Errorf("key %q is not snake_case", key)
		}
	}
}

// runCrawl makes the crawl of cfg, failing the test if it cannot, and
// runs it to its end.
func runCrawl(t *testing.T, cfg weft.Config) (weft.Summary, error) {
	t.Helper()
	c, err := weft.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c.Run(context.Background())
}

// A consumer is given each HTML page's title, as document.title reads it.
func TestConsumerGetsTheTitle(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		switch r.URL.Path {
		case "/":
			fmt.Fprint(w, "<html><head><title>\n  Kettle &amp;\tCo </title></head><body><a href=\"/untitled\">x</a></body></html>")
		case "/untitled":
			fmt.Fprint(w, "<p>no title</p>")
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	cfg := config(srv, t.TempDir())
	var mu sync.Mutex
	titles := map[string]string{}
	cfg.Consumers = []weft.Consumer{weft.ConsumerFunc(func(p *weft.Page) error {
		mu.Lock()
		defer mu.Unlock()
		titles[strings.TrimPrefix(p.URL, srv.URL)] = p.Title
		return nil
	})}
	if _, err := runCrawl(t, cfg); err != nil {
		t.Fatal(err)
	}
	if title, ok := titles["/untitled"]; titles["/"] != "Kettle & Co" || !ok || title != "" {
		t.Errorf("titles %q; want / titled \"Kettle & Co\" and /untitled given without one", titles)
	}
}
