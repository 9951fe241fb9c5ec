package inforce

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/weft-crawler/weft/internal/frontier"
	"github.com/weft-crawler/weft/internal/lifecycle"
	"github.com/weft-crawler/weft/internal/policy"
	"github.com/weft-crawler/weft/internal/store"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var limits = policy.Limits{Delay: time.Second}

// TestDelayNeverShortensCrawlDelay: a host's policy delay is folded into
// the Crawl-delay its clock keeps, the lease's or the one its robots.txt
// just gave, whichever is longer; a robots.txt Crawl-delay longer than the
// policy's wins, and is said once in the log; a host without a policy
// keeps its result as it was.
func TestDelayNeverShortensCrawlDelay(t *testing.T) {
	set := policy.NewSet(limits)
	if err := set.Put("a.test", policy.Policy{Delay: policy.Duration(3 * time.Second)}); err != nil {
		t.Fatal(err)
	}
	var logged bytes.Buffer
	p := New(Config{Set: set, Limits: limits, Log: slog.New(slog.NewTextHandler(&logged, nil))})
	l := frontier.Lease{Item: frontier.Item{Host: "a.test"}, Clock: frontier.Clock{CrawlDelay: time.Second}}
	if res := p.Delay(l, frontier.Result{Fetched: true}); !res.SetCrawlDelay || res.CrawlDelay != 3*time.Second || !res.Fetched {
		t.Errorf("a policy of 3 s over a Crawl-delay of 1 s: %+v", res)
	}
	for range 2 {
		if res := p.Delay(l, frontier.Result{SetCrawlDelay: true, CrawlDelay: 5 * time.Second}); res.CrawlDelay != 5*time.Second {
			t.Errorf("a policy of 3 s under a robots.txt Crawl-delay of 5 s: %v", res.CrawlDelay)
		}
	}
	if n := strings.Count(logged.String(), "policy refused"); n != 1 {
		t.Errorf("the refused policy delay logged %d times, want once:\n%s", n, logged.String())
	}
	other := frontier.Lease{Item: frontier.Item{Host: "b.test"}, Clock: frontier.Clock{CrawlDelay: time.Second}}
	if res := p.Delay(other, frontier.Result{Fetched: true}); res != (frontier.Result{Fetched: true}) {
		t.Errorf("a host without a policy: %+v, want its result unchanged", res)
	}
}

// TestSetIsKeptOrRefused: a policy set is in force and kept in the store,
// where Load finds it for the next run, and one deleted is gone from both;
// one that would loosen the crawl, or that carries headers, is refused
// and changes nothing; once the crawl has closed, nothing changes.
func TestSetIsKeptOrRefused(t *testing.T) {
	db, err := store.Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	life := &lifecycle.State{}
	log := slog.New(slog.DiscardHandler)
	p := New(Config{Set: policy.NewSet(limits), Limits: limits, DB: db, Life: life, Log: log})
	loaded := func() map[string]policy.Policy {
		t.Helper()
		set := policy.NewSet(limits)
		if err := Load(db, set, log); err != nil {
			t.Fatal(err)
		}
		return set.All()
	}
	if err := p.Set("a.test", policy.Policy{Delay: policy.Duration(time.Second / 2)}); err == nil {
		t.Error("a policy delay shorter than the crawl's was accepted")
	}
	if err := p.Set("a.test", policy.Policy{Headers: map[string]string{"X-Site": "a"}}); err == nil {
		t.Error("a policy with headers was accepted")
	}
	if _, ok := p.Policy("a.test"); ok || len(loaded()) != 0 {
		t.Fatal("a refused policy is in force or kept")
	}
	if err := p.Set("A.test", policy.Policy{Delay: policy.Duration(2 * time.Second), Disallow: []string{"/private/"}}); err != nil {
		t.Fatal(err)
	}
	if pol, ok := p.Policy("a.test"); !ok || time.Duration(pol.Delay) != 2*time.Second {
		t.Errorf("in force: %+v, %v", pol, ok)
	}
	if pol, ok := loaded()["a.test"]; !ok || len(pol.Disallow) != 1 {
		t.Errorf("kept: %+v, %v", pol, ok)
	}
	if had, err := p.Delete("a.test"); !had || err != nil {
		t.Errorf("delete: %v, %v", had, err)
	}
	if _, ok := p.Policy("a.test"); ok || len(loaded()) != 0 {
		t.Error("a deleted policy is in force or kept")
	}
	life.Set(func(ph *lifecycle.Phase) { ph.Closed = true })
	if err := p.Set("a.test", policy.Policy{Delay: policy.Duration(2 * time.Second)}); !errors.Is(err, lifecycle.ErrNotRunning) {
		t.Errorf("set once closed: %v", err)
	}
	if _, err := p.Delete("a.test"); !errors.Is(err, lifecycle.ErrNotRunning) {
		t.Errorf("delete once closed: %v", err)
	}
}
