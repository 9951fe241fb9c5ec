package api

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/weft-crawler/weft/internal/policy"
)

// stopped is the resources of a crawl that no longer takes work: each
// answers ErrNotRunning, wrapped as a resource may.
type stopped struct{}

var errStopped = fmt.Errorf("a.test: %w", ErrNotRunning)

func (stopped) AddSeeds([]string, []SeedOptions, bool) ([]Verdict, error) { return nil, errStopped }
func (stopped) SeedList(int, int) SeedList                                { return SeedList{} }
func (stopped) Lease(context.Context, int, time.Duration, time.Duration) ([]Lease, error) {
	return nil, errStopped
}
func (stopped) Complete(string, string, int, time.Time, string) error { return errStopped }
func (stopped) URLs(string, string, *URLPos, int) ([]URLRecord, *URLPos, error) {
	return nil, nil, errStopped
}
func (stopped) Page(URLPos) (Page, error)             { return Page{}, errStopped }
func (stopped) Policy(string) (policy.Policy, bool)   { return policy.Policy{}, false }
func (stopped) SetPolicy(string, policy.Policy) error { return errStopped }
func (stopped) DeletePolicy(string) (bool, error)     { return false, errStopped }

// TestNotRunning: every request a crawl that no longer takes work cannot
// answer is 503 not_running, whichever resource said so.
func TestNotRunning(t *testing.T) {
	f := &fakeCrawl{}
	s, err := New(Config{Addr: "127.0.0.1:0", Token: "t"}, Resources{Crawl: f, Seeds: stopped{}, Frontier: stopped{}, Hosts: f, Fetches: f, URLs: stopped{}, Policies: stopped{}})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []struct{ method, path, body string }{
		{"POST", "/v1/seeds", `{"urls": ["http://a.test/"]}`},
		{"POST", "/v1/frontier/lease", `{"worker_id": "w1", "max_urls": 2}`},
		{"POST", "/v1/frontier/complete", `{"lease_id": "L1", "url": "http://a.test/", "status_code": 200}`},
		{"GET", "/v1/urls", ""},
		{"GET", "/v1/pages/" + encodePos(&URLPos{Host: "a.test"}), ""},
		{"PUT", "/v1/policies/a.test", `{"crawl_delay": "3s"}`},
		{"DELETE", "/v1/policies/a.test", ""},
	} {
		if code, _, body := do(t, s, r.method, r.path, "t", r.body); code != 503 || errorCode(t, body) != "not_running" {
			t.Errorf("%s %s: %d %s, want 503 not_running", r.method, r.path, code, body)
		}
	}
}
