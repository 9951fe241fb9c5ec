package operator

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/weft-crawler/weft/internal/api"
	"github.com/weft-crawler/weft/internal/crawl"
	"github.com/weft-crawler/weft/internal/importance"
	"github.com/weft-crawler/weft/internal/policy"
	"github.com/weft-crawler/weft/internal/recrawl"
	"github.com/weft-crawler/weft/internal/synthweb"
)

// TestURLsShowRank: GET /v1/urls shows, for each of a host's URLs, the
// rank it was queued with and what its rank is made of now: its in-link
// cash, its depth and sitemap priors, and the operator's boost. The host
// has a policy boosting /news/*; its home page links forty plain pages
// and ten news pages, and its sitemap lists a page nothing links to.
func TestURLsShowRank(t *testing.T) {
	today := time.Now().UTC().Format("2006-01-02")
	site := synthweb.BoostSite()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/sitemap.xml" {
			site.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/xml")
		fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`+
			`<url><loc>http://%s/listed</loc><priority>1.0</priority><lastmod>%s</lastmod></url></urlset>`, r.Host, today)
	}))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	set := policy.NewSet(policy.Limits{})
	if err := set.Put(host, policy.Policy{Boosts: []policy.PatternBoost{{Pattern: "/news/*", Factor: 8}}}); err != nil {
		t.Fatal(err)
	}
	cfg := crawl.Config{Seeds: []string{srv.URL + "/"}, DataDir: t.TempDir(), Workers: 2, Delay: time.Millisecond, UserAgent: "weft/test (+https://example.org/weft-crawler)",
		NoRequisites: true, Render: crawl.RenderConfig{Mode: crawl.RenderNever}, Policies: set,
		Recrawl: &recrawl.Policy{Min: time.Hour}} // continuous: the API answers once all is fetched
	cfg.Fetch.AllowCIDRs = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	cfg.Fetch.Resolver = noNames{t} // the site is an address: its sitemap's namespace is no link
	c, err := crawl.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	base := serve(t, c, api.Config{})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := c.Run(ctx)
		done <- err
	}()
	defer func() {
		cancel()
		<-done
	}()
	urls := func() map[string]api.URL {
		code, body := request(t, base, "GET", "/v1/urls?limit=1000&host="+host, "", "")
		var page api.URLs
		if err := json.Unmarshal([]byte(body), &page); code != 200 || err != nil {
			t.Fatalf("GET /v1/urls: %d %s", code, body)
		}
		out := map[string]api.URL{}
		for _, u := range page.URLs {
			out[strings.TrimPrefix(u.URL, srv.URL)] = u
		}
		return out
	}
	var got map[string]api.URL
	waitUntil(t, "the pages fetched", func() bool {
		got = urls()
		for _, p := range []string{"/", "/plain39", "/news/09", "/listed"} {
			if got[p].Status != "done" {
				return false
			}
		}
		return true
	})
	// The home page hands out its unit over its fifty links.
	share := uint32(importance.Unit / 50)
	sitemap := importance.Listed(1, time.Now(), time.Now())
	for path, want := range map[string]struct {
		rank uint32
		est  api.Estimate
	}{
		"/":        {0, api.Estimate{Rank: 8, DepthPrior: 8, Boost: 1}}, // a seed is queued unranked
		"/plain00": {share + 8, api.Estimate{Rank: share + 8, InLinkCash: share, DepthPrior: 8, Boost: 1}},
		"/news/09": {8 * (share + 8), api.Estimate{Rank: 8 * (share + 8), InLinkCash: share, DepthPrior: 8, Boost: 8}},
		"/listed":  {4 + sitemap, api.Estimate{Rank: 4 + sitemap, DepthPrior: 4, SitemapPrior: sitemap, Boost: 1}}, // two hops: robots.txt's /sitemap.xml, then its page
	} {
		if u := got[path]; u.Rank != want.rank || u.Estimate != want.est {
			t.Errorf("%s: rank %d, estimate %+v; want %d, %+v", path, u.Rank, u.Estimate, want.rank, want.est)
		}
	}
}

// noNames is a resolver for a crawl whose every URL is an address: any
// name looked up fails the test, and is answered without a query leaving
// the machine.
type noNames struct{ t *testing.T }

func (n noNames) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	n.t.Errorf("the crawl looked up %q; its site is a loopback address", host)
	return nil, &net.DNSError{Err: "no such host (test)", Name: host, IsNotFound: true}
}
