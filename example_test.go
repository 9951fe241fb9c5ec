package weft_test

import (
	"bytes"
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/weft-crawler/weft"
)

// site serves a small shop on loopback: a home page, two products and a
// cart page.
func site() *httptest.Server {
	pages := map[string]string{
		"/":           `<a href="/p/1">Kettle</a> <a href="/p/2">Lamp</a> <a href="/cart">Cart</a>`,
		"/p/1":        `<h1>Kettle</h1><span class="price">12.50</span><a href="/">Home</a>`,
		"/p/2":        `<h1>Lamp</h1><span class="price">30.00</span><a href="/cart">Cart</a>`,
		"/cart":       `<h1>Your cart</h1>`,
		"/robots.txt": "User-agent: *\nDisallow: /cart\n",
	}
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := pages[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		if r.URL.Path == "/robots.txt" {
			w.Header().Set("Content-Type", "text/plain")
		} else {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
		}
		fmt.Fprint(w, body)
	}))
}

// config is a crawl of srv: loopback allowed, a short delay.
func config(srv *httptest.Server, dir string) weft.Config {
	return weft.Config{
		Seeds:         []string{srv.URL + "/"},
		DataDir:       dir,
		UserAgent:     "example-bot/1.0 (+https://example.org/bot)",
		Delay:         time.Millisecond,
		AllowNetworks: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
	}
}

// A crawl of a site, each page given to a Consumer once it is archived.
func Example() {
	srv := site()
	defer srv.Close()
	dir, _ := os.MkdirTemp("", "weft-example-")
	defer os.RemoveAll(dir)

	cfg := config(srv, dir)
	var mu sync.Mutex
	var seen []string
	cfg.Consumers = []weft.Consumer{weft.ConsumerFunc(func(p *weft.Page) error {
		if p.Status != http.StatusOK {
			return nil // the site has no /sitemap.xml, which weft asks for
		}
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, fmt.Sprintf("%s %d %q", strings.TrimPrefix(p.URL, srv.URL), p.Status, p.Text()))
		return nil
	})}
	c, err := weft.New(cfg)
	if err != nil {
		log.Fatal(err)
	}
	sum, err := c.Run(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	slices.Sort(seen)
	fmt.Println(strings.Join(seen, "\n"))
	fmt.Println("stopped:", sum.StoppedBy, "2xx:", sum.ByStatus["2xx"], "links refused by robots.txt:", sum.Rejected["robots"])
	// Output:
	// / 200 "Kettle Lamp Cart"
	// /p/1 200 "Kettle 12.50 Home"
	// /p/2 200 "Lamp 30.00 Cart"
	// stopped: drained 2xx: 3 links refused by robots.txt: 2
}

// A Handler extracts fields from the pages of its media types; they come
// with each page to the Consumers (and in its event).
func ExampleHandlerFunc() {
	srv := site()
	defer srv.Close()
	dir, _ := os.MkdirTemp("", "weft-example-")
	defer os.RemoveAll(dir)

	cfg := config(srv, dir)
	price := weft.HandlerFunc("price", func(r *weft.Response) (weft.Result, error) {
		i := bytes.Index(r.Body, []byte(`class="price">`))
		if i < 0 {
			return weft.Result{}, nil
		}
		v, _, _ := strings.Cut(string(r.Body[i+len(`class="price">`):]), "<")
		return weft.Result{Fields: map[string]any{"price": v}}, nil
	}, "text/html")
	cfg.Handlers = []weft.Handler{price}
	var mu sync.Mutex
	var prices []string
	cfg.Consumers = []weft.Consumer{weft.ConsumerFunc(func(p *weft.Page) error {
		if v, ok := p.Fields["price"]; ok {
			mu.Lock()
			prices = append(prices, fmt.Sprint(strings.TrimPrefix(p.URL, srv.URL), " ", v))
			mu.Unlock()
		}
		return nil
	})}
	c, err := weft.New(cfg)
	if err != nil {
		log.Fatal(err)
	}
	sum, err := c.Run(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	slices.Sort(prices)
	fmt.Println(strings.Join(prices, "\n"))
	fmt.Println("read by price:", sum.Handled["price"], "failed:", sum.HandlerFailed["price"])
	// Output:
	// /p/1 12.50
	// /p/2 30.00
	// read by price: 3 failed: 0
}

// A LinkFilter refuses URLs with a reason, which the summary counts.
func ExampleLinkFilterFunc() {
	srv := site()
	defer srv.Close()
	dir, _ := os.MkdirTemp("", "weft-example-")
	defer os.RemoveAll(dir)

	cfg := config(srv, dir)
	cfg.Filters = []weft.LinkFilter{weft.LinkFilterFunc(func(l weft.Link) string {
		if strings.HasSuffix(l.URL, "/p/2") {
			return "not-this-one"
		}
		return ""
	})}
	c, err := weft.New(cfg)
	if err != nil {
		log.Fatal(err)
	}
	sum, err := c.Run(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("2xx:", sum.ByStatus["2xx"], "refused:", sum.Rejected["not-this-one"])
	// Output:
	// 2xx: 2 refused: 1
}

// A Scope keeps the crawl to some URLs (Hosts makes one of host names).
func ExampleScopeFunc() {
	srv := site()
	defer srv.Close()
	dir, _ := os.MkdirTemp("", "weft-example-")
	defer os.RemoveAll(dir)

	cfg := config(srv, dir)
	// Only the home page and the first product: a ScopeFunc can say
	// anything of a URL, Hosts only of its host.
	cfg.Scope = weft.ScopeFunc(func(u *url.URL) bool { return u.Path == "/" || u.Path == "/p/1" })
	c, err := weft.New(cfg)
	if err != nil {
		log.Fatal(err)
	}
	sum, err := c.Run(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("2xx:", sum.ByStatus["2xx"], "links out of scope:", sum.Rejected["scope"])
	// Output:
	// 2xx: 2 links out of scope: 3
}
