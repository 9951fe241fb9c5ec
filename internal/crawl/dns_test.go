package crawl

import (
	"context"
	"net"
	"net/http"
	"net/netip"
	"testing"
	"time"

	"github.com/weft-crawler/weft/internal/judge"
)

// flakyResolver answers "no such host" for the names it does not know,
// as the tests' offline resolver does, but fails as a resolver that timed
// out for one name.
type flakyResolver struct {
	offline
	timesOut string
}

func (r flakyResolver) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	if host == r.timesOut {
		return nil, &net.DNSError{Err: "i/o timeout", Name: host, IsTimeout: true, IsTemporary: true}
	}
	return r.offline.LookupNetIP(ctx, network, host)
}

// TestNoSuchHostIsNotAskedAgain: a seed whose name does not exist is
// refused as unreachable at its robots.txt's first answer, for the run,
// not asked for again --robots-attempts times: the name is no more likely
// to exist a minute later. A resolver that timed out is asked again.
func TestNoSuchHostIsNotAskedAgain(t *testing.T) {
	mw := newMiniWeb(t, map[string]func(*miniWeb, http.ResponseWriter, *http.Request){
		"ok.test": func(w *miniWeb, rw http.ResponseWriter, r *http.Request) { page(rw) },
	})
	cfg := mw.config(t, 0, mw.url("ok.test", "/"), "http://gone.invalid/", "http://slowdns.invalid/")
	cfg.NoSitemaps = true
	cfg.RobotsRetryWait = 100 * time.Millisecond
	cfg.Fetch.Resolver = flakyResolver{offline{t}, "slowdns.invalid"}
	sum := runCrawl(t, cfg)
	attempts := map[string]int{}
	for _, r := range readFetchLog(t, cfg.DataDir) {
		if r.Outcome == "error:dns" {
			attempts[r.Host]++
		}
	}
	if attempts["gone.invalid"] != 1 || attempts["slowdns.invalid"] != 3 {
		t.Errorf("robots.txt asked for %v; want gone.invalid once, slowdns.invalid three times (--robots-attempts)", attempts)
	}
	if sum.StoppedBy != "drained" || sum.Rejected[judge.Unreachable] != 2 {
		t.Errorf("stopped by %s, rejected %v; want drained, both seeds unreachable", sum.StoppedBy, sum.Rejected)
	}
}
