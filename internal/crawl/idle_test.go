package crawl

import (
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/weft-crawler/weft/internal/recrawl"
	"github.com/weft-crawler/weft/internal/testwait"
)

// TestServeSaysWhenTheNextRecrawlIsDue: a continuous crawl that has
// fetched every page of its site and has nothing queued waits for the
// first of them to come due again, and says so: the progress line and
// the API's wait name the time (an hour or more away at a Min of an
// hour), not an unexplained idle frontier.
func TestServeSaysWhenTheNextRecrawlIsDue(t *testing.T) {
	srv, asked := importanceSite(t)
	cfg := bare(Config{Seeds: []string{srv.URL + "/"}, DataDir: t.TempDir(), Workers: 2, UserAgent: "weft/test (+https://example.org/weft-crawler)"})
	cfg.Fetch.AllowCIDRs = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	cfg.NoSitemaps = true
	cfg.Recrawl = &recrawl.Policy{Min: time.Hour}
	cfg.RecrawlScan = 20 * time.Millisecond
	start := time.Now() // before any fetch
	c := startCrawl(t, cfg)
	defer func() {
		if _, err := c.stop(); err != nil {
			t.Error(err)
		}
	}()
	// Copies of URLs queued again may still wait on the host's clock,
	// to be dropped, after the last page: the frontier's wait then comes
	// first, and the recrawl once they are gone.
	var p Progress
	testwait.Eventually(t, time.Minute, "the site fetched, and the progress line waiting for the next recrawl", func() bool {
		p = c.Progress()
		return len(asked()) >= 53 && p.Queued == 0 && p.InFlight == 0 && strings.Contains(p.Waiting, "for the next recrawl")
	})
	l := c.Live()
	if l.Recrawl == nil || l.Recrawl.At.Before(start.Add(time.Hour)) || l.Recrawl.Text == "" {
		t.Fatalf("Live.Recrawl %+v, want a recrawl an hour or more after the start", l.Recrawl)
	}
}
