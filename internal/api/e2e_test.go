package api

import (
	"context"
	"encoding/json"
	"net/http"
	"net/netip"
	"testing"
	"time"

	"weft/internal/crawl"
	"weft/internal/synthweb"
)

// TestPauseAndStatsLive runs a crawl of the synthetic web with the API on
// loopback: /v1/stats follows it as it goes; a pause through the API stops
// every request from the servers' side (their log) until a resume, with
// politeness kept throughout; and the final /v1/stats agrees with the
// crawl's summary.
func TestPauseAndStatsLive(t *testing.T) {
	web, err := synthweb.Start(synthweb.Config{Seed: 11, Hosts: 6, PagesPerHost: 25, RobotsKinds: []synthweb.RobotsKind{synthweb.RobotsNotFound}})
	if err != nil {
		t.Fatal(err)
	}
	defer web.Close()
	const delay = 30 * time.Millisecond
	cfg := crawl.Config{Seeds: web.Seeds(), DataDir: t.TempDir(), Workers: 4, Delay: delay, UserAgent: "weft/test (+https://example.org/weft-crawler)", NoSitemaps: true}
	cfg.Fetch.Resolve = web.Resolve()
	cfg.Fetch.AllowCIDRs = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	cfg.Fetch.ResponseHeaderTimeout = 3 * time.Second
	c, err := crawl.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(Config{Addr: "127.0.0.1:0", Token: "tok"}, c)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer srv.Close(context.Background())
	base := "http://" + srv.Addr()
	client := &http.Client{Timeout: 5 * time.Second}
	stats := func() Stats {
		t.Helper()
		resp, err := client.Get(base + "/v1/stats")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var st Stats
		if err := json.NewDecoder(resp.Body).Decode(&st); err != nil || resp.StatusCode != 200 {
			t.Fatalf("stats: %d %v", resp.StatusCode, err)
		}
		return st
	}
	post := func(path string) {
		t.Helper()
		req, _ := http.NewRequest("POST", base+path, nil)
		req.Header.Set("Authorization", "Bearer tok")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("POST %s: %d", path, resp.StatusCode)
		}
	}

	done := make(chan crawl.Summary, 1)
	go func() {
		sum, err := c.Run(t.Context())
		if err != nil {
			t.Error(err)
		}
		done <- sum
	}()
	deadline := time.Now().Add(20 * time.Second)
	for stats().Pages < 20 {
		if time.Now().After(deadline) {
			t.Fatal("the crawl did not reach 20 pages")
		}
		time.Sleep(20 * time.Millisecond)
	}
	post("/v1/pause")
	time.Sleep(300 * time.Millisecond) // the fetches in flight end
	quietFrom := time.Now()
	before := stats()
	time.Sleep(700 * time.Millisecond)
	quietTo := time.Now()
	during := stats()
	post("/v1/resume")
	if !before.Paused || !during.Paused || during.Pages != before.Pages {
		t.Errorf("paused: %v then %v, pages %d then %d; want paused and no page fetched", before.Paused, during.Paused, before.Pages, during.Pages)
	}
	for _, r := range web.Log() {
		if r.Start.After(quietFrom) && r.Start.Before(quietTo) {
			t.Errorf("a request during the pause: %s %s at %v", r.Host, r.Path, r.Start.Sub(quietFrom))
		}
	}
	var sum crawl.Summary
	select {
	case sum = <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("the crawl did not end after the resume")
	}
	end := stats()
	if sum.StoppedBy != "drained" || end.Paused || end.Pages != sum.Pages || end.Pages <= before.Pages || end.ByStatus["2xx"] != sum.ByStatus["2xx"] {
		t.Errorf("after the resume: stopped by %s, API pages %d (paused %v), summary %d, %d before the pause", sum.StoppedBy, end.Pages, end.Paused, sum.Pages, before.Pages)
	}
	if rep := synthweb.Audit(web, delay); !rep.OK() {
		t.Errorf("politeness: %+v", rep)
	}
}
