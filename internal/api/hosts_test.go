package api

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/weft-crawler/weft/internal/frontier"
	"github.com/weft-crawler/weft/internal/policy"
	"github.com/weft-crawler/weft/internal/testwait"
)

// TestHostStates: each state is named for what the host is doing, the
// first that applies in HostStates' order; a host with URLs whose clock
// has not come is waiting, not idle, and a held host is held whatever its
// clock says.
func TestHostStates(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	later, earlier := now.Add(time.Second), now.Add(-time.Second)
	for _, c := range []struct {
		name    string
		f       frontier.HostInfo
		blocked bool
		want    string
	}{
		{"given up beats everything", frontier.HostInfo{Queued: 3, Held: true, Busy: true, Clock: frontier.Clock{GaveUp: true}}, true, StateGivenUp},
		{"held, its clock passed", frontier.HostInfo{Queued: 3, Held: true, Clock: frontier.Clock{NextAt: earlier}}, false, StateHeld},
		{"partition held", frontier.HostInfo{Queued: 3, PartitionHeld: true}, false, StateHeld},
		{"robots-blocked", frontier.HostInfo{Queued: 3, Clock: frontier.Clock{NextAt: earlier}}, true, StateRobotsBlocked},
		{"in flight", frontier.HostInfo{Queued: 3, Busy: true, Clock: frontier.Clock{NextAt: later}}, false, StateInFlight},
		{"parked", frontier.HostInfo{Queued: 3, Parked: true, Clock: frontier.Clock{NextAt: later}}, false, StateParked},
		{"ready", frontier.HostInfo{Queued: 3, Clock: frontier.Clock{NextAt: earlier}}, false, StateReady},
		{"ready, never fetched", frontier.HostInfo{Queued: 1}, false, StateReady},
		{"ready, its queue on disk", frontier.HostInfo{MoreOnDisk: true, Clock: frontier.Clock{NextAt: now}}, false, StateReady},
		{"waiting", frontier.HostInfo{Queued: 3, Clock: frontier.Clock{NextAt: later}}, false, StateWaiting},
		{"idle", frontier.HostInfo{Clock: frontier.Clock{NextAt: later}}, false, StateIdle},
	} {
		if got := hostState(c.f, c.blocked, now); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// TestClockWhy: the next allowed time is explained by the term that set
// it.
func TestClockWhy(t *testing.T) {
	now := time.Now()
	next := now.Add(2 * time.Second)
	pol := &policy.Policy{Delay: policy.Duration(3 * time.Second)}
	for _, c := range []struct {
		name string
		st   HostStatus
		pol  *policy.Policy
		last time.Time
		want string
	}{
		{"nothing holds it", HostStatus{Gap: time.Second, Frontier: frontier.HostInfo{Clock: frontier.Clock{NextAt: now.Add(-time.Second)}}}, nil, time.Time{}, ""},
		{"the crawl's delay", HostStatus{Gap: time.Second, Frontier: frontier.HostInfo{Clock: frontier.Clock{NextAt: now.Add(time.Second), CrawlDelay: 500 * time.Millisecond}}}, nil, now, "delay"},
		{"Crawl-delay", HostStatus{Gap: 3 * time.Second, Frontier: frontier.HostInfo{Clock: frontier.Clock{NextAt: next, CrawlDelay: 3 * time.Second}}}, nil, now, "crawl-delay"},
		{"policy", HostStatus{Gap: 3 * time.Second, Frontier: frontier.HostInfo{Clock: frontier.Clock{NextAt: next, CrawlDelay: 3 * time.Second}}}, pol, now, "policy"},
		{"backoff", HostStatus{Gap: 4 * time.Second, Frontier: frontier.HostInfo{Clock: frontier.Clock{NextAt: next, CrawlDelay: time.Second, Backoff: 4 * time.Second}}}, nil, now, "backoff"},
		{"latency", HostStatus{Gap: time.Second, Frontier: frontier.HostInfo{Clock: frontier.Clock{NextAt: now.Add(10 * time.Second)}}}, nil, now, "latency"},
		{"parked", HostStatus{Gap: time.Second, Frontier: frontier.HostInfo{Parked: true, Clock: frontier.Clock{NextAt: now.Add(time.Minute)}}}, nil, now, "parked"},
		// The clock's own reason, where it has one.
		{"Retry-After", HostStatus{Gap: time.Second, Frontier: frontier.HostInfo{Clock: frontier.Clock{NextAt: now.Add(time.Hour), Why: frontier.WhyRetryAfter}}}, nil, now, "Retry-After"},
		{"parked after failures", HostStatus{Gap: time.Second, Frontier: frontier.HostInfo{Clock: frontier.Clock{NextAt: now.Add(time.Minute), Why: frontier.WhyPark}}}, nil, now, "parked"},
		{"robots.txt retried", HostStatus{Gap: time.Second, Frontier: frontier.HostInfo{Clock: frontier.Clock{NextAt: now.Add(time.Minute), Why: frontier.WhyRetry}}}, nil, now, "retry"},
		{"a gap's term", HostStatus{Gap: 3 * time.Second, Frontier: frontier.HostInfo{Clock: frontier.Clock{NextAt: next, CrawlDelay: 3 * time.Second, Why: frontier.WhyGap}}}, nil, now, "crawl-delay"},
	} {
		if got := clockWhy(c.st, c.pol, c.last, now); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// TestHostPage: GET /v1/hosts/{host} says the host's state, why its clock
// stands where it does, its policy, robots.txt age and recent activity.
func TestHostPage(t *testing.T) {
	f := &fakeCrawl{}
	s, err := New(Config{Addr: "127.0.0.1:0", Token: "tok"}, resourcesOf(f))
	if err != nil {
		t.Fatal(err)
	}
	if code, _, body := do(t, s, "PUT", "/v1/policies/known.test:8080", "tok", `{"crawl_delay": "3s", "disallowed": ["/private/"]}`); code != 200 && code != 204 {
		t.Fatalf("put policy: %d %s", code, body)
	}
	code, _, body := do(t, s, "GET", "/v1/hosts/known.test:8080", "", "")
	if code != 200 {
		t.Fatalf("%d %s", code, body)
	}
	var h Host
	if err := json.Unmarshal([]byte(body), &h); err != nil {
		t.Fatal(err)
	}
	// The fake's clock came in 2026-11-30: the host, with 5 URLs queued,
	// is ready.
	if h.State != StateReady || h.NextAllowedWhy != "" {
		t.Errorf("state %q, why %q; want ready and nothing", h.State, h.NextAllowedWhy)
	}
	if h.Policy == nil || time.Duration(h.Policy.Delay) != 3*time.Second || len(h.Policy.Disallow) != 1 {
		t.Errorf("policy %+v", h.Policy)
	}
	if h.Robots == nil || h.Robots.AgeSeconds < 3600 || h.Robots.Why != "" {
		t.Errorf("robots %+v, want its age since 2026-11-30 11:00", h.Robots)
	}
	// A host not crawled for its Crawl-delay says so.
	code, _, body = do(t, s, "GET", "/v1/hosts/slow.test", "", "")
	var slow Host
	if err := json.Unmarshal([]byte(body), &slow); code != 200 || err != nil {
		t.Fatalf("%d %s %v", code, body, err)
	}
	if r := slow.Robots; r == nil || r.Outcome != "disallow-all" || r.Why != "Crawl-delay 1h0m0s is longer than the crawl waits for a host (1m0s)" {
		t.Errorf("slow.test robots %+v; want disallow-all, and why", slow.Robots)
	}
	if a := h.Activity; a == nil || a.Fetched != 3 || a.Errors != 1 || len(a.Last) != 1 || a.Last[0].Status != 200 || a.PerMinute != 2 {
		t.Errorf("activity %+v", h.Activity)
	}
	// The list shows states and policies too, not the activity.
	code, _, body = do(t, s, "GET", "/v1/hosts", "", "")
	var list HostList
	if err := json.Unmarshal([]byte(body), &list); code != 200 || err != nil || len(list.Hosts) != 1 {
		t.Fatalf("%d %s", code, body)
	}
	if lh := list.Hosts[0]; lh.State != StateReady || lh.Policy == nil || lh.Activity != nil {
		t.Errorf("listed %+v", lh)
	}
}

// TestHistoryEndpoint: the server samples the crawl from its start, so
// GET /v1/history has samples whenever it is asked, with the interval in
// progress.
func TestHistoryEndpoint(t *testing.T) {
	s, err := New(Config{Addr: "127.0.0.1:0", HistoryInterval: 5 * time.Millisecond}, resourcesOf(&fakeCrawl{}))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	defer s.Close(t.Context())
	var h History
	testwait.Eventually(t, 30*time.Second, "three fine samples", func() bool {
		code, _, body := do(t, s, "GET", "/v1/history", "", "")
		if code != 200 {
			t.Fatalf("%d %s", code, body)
		}
		h = History{}
		if err := json.Unmarshal([]byte(body), &h); err != nil {
			t.Fatal(err)
		}
		return len(h.Fine) >= 3
	})
	if h.IntervalSeconds != 0.005 || h.CoarseIntervalSeconds != 0.15 || h.Current == nil {
		t.Errorf("intervals %v and %v, current %v", h.IntervalSeconds, h.CoarseIntervalSeconds, h.Current)
	}
	// The fake's counters stand still: samples of nothing, its gauges; the
	// queue depth is the store's count (9), not the frontier's (7).
	if f := h.Fine[0]; f.Pages != 0 || f.Queued != 9 || f.InFlight != 2 || f.Ready != 1 || f.Waiting != 2 || f.P50 != nil {
		t.Errorf("sample %+v", f)
	}
}
