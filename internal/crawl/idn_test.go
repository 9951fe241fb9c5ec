package crawl

import (
	"context"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"testing"
	"time"
)

// noDNS answers every lookup with "no such host": a test whose names are
// all pinned never asks a real resolver, even when the pinning is broken.
type noDNS struct{}

func (noDNS) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	return nil, &net.DNSError{Err: "no such host (the test asks no resolver)", Name: host, IsNotFound: true}
}

// A host with an internationalised name, pinned by its Unicode name as
// --resolve gives it, is crawled: its URLs carry the punycode form, which
// the pinning must match.
func TestCrawlInternationalHostThroughResolve(t *testing.T) {
	mw := newMiniWeb(t, map[string]func(*miniWeb, http.ResponseWriter, *http.Request){
		"bücher.test": func(w *miniWeb, rw http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/robots.txt":
				http.NotFound(rw, r)
			case "/":
				page(rw, "/a", "/b")
			default:
				page(rw)
			}
		},
	})
	cfg := mw.config(t, 5*time.Millisecond, mw.url("bücher.test", "/"))
	cfg.Fetch.Resolver = noDNS{}
	sum := runCrawl(t, cfg)
	got := mw.paths("bücher.test")
	slices.Sort(got)
	if want := []string{"/", "/a", "/b", "/robots.txt"}; !slices.Equal(got, want) || sum.Errors["dns"] != 0 {
		t.Errorf("requests %v, DNS errors %d; want %v, none", got, sum.Errors["dns"], want)
	}
}
