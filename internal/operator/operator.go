// Package operator hands a crawl to its operator API: it gives
// internal/api an implementation of each of its resources, reading and
// steering a crawl.Crawler and answering in the API's own types, so that
// the API knows nothing of the crawl's packages and the crawl nothing of
// the API.
package operator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/weft-crawler/weft/internal/api"
	"github.com/weft-crawler/weft/internal/archive"
	"github.com/weft-crawler/weft/internal/crawl"
	"github.com/weft-crawler/weft/internal/frontier"
	"github.com/weft-crawler/weft/internal/importance"
	"github.com/weft-crawler/weft/internal/policy"
	"github.com/weft-crawler/weft/internal/scope"
	"github.com/weft-crawler/weft/internal/seeds"
	"github.com/weft-crawler/weft/internal/store"
)

// Resources returns c's resources for its operator API. Its Hosts speak
// the API's types (package live's) and serve as they are; the other six
// resources answer in values and errors of the crawl's that the API has
// its own for, and one adapter translates them.
func Resources(c *crawl.Crawler) api.Resources {
	a := adapter{crawler: c, records: c.Records(), policies: c.Policies()}
	return api.Resources{Crawl: a, Seeds: a, Frontier: a, Hosts: c.Hosts(), Fetches: a, URLs: a, Policies: a}
}

// adapter is api.Crawl, Seeds, Frontier, FetchLog, Records and Policies
// over the parts of a crawl that hold what they read: the Crawler for
// what needs the crawl as a whole (its counters, pause, seeds, external
// leases, fetch log), its URL records, its operators' policies. It keeps
// no state of its own: it converts values and errors, nothing more.
type adapter struct {
	crawler  *crawl.Crawler
	records  *crawl.Records
	policies *crawl.Policies
}

// apiErr is err as the API tells errors apart.
func apiErr(err error) error {
	switch {
	case errors.Is(err, crawl.ErrNotRunning):
		return api.ErrNotRunning
	case errors.Is(err, crawl.ErrUnknownURL):
		return api.ErrUnknownURL
	case errors.Is(err, crawl.ErrUnknownLease):
		return api.ErrUnknownLease
	}
	return err
}

// The crawl as a whole: api.Crawl.

func (a adapter) Stats() api.Stats     { return statsOf(a.crawler.Live(), time.Now()) }
func (a adapter) Metrics() api.Metrics { return a.crawler.Metrics() }
func (a adapter) Pause()               { a.crawler.Pause() }
func (a adapter) Resume()              { a.crawler.Resume() }

// statsOf is a snapshot of the crawl as the API counts it, at now.
func statsOf(l crawl.Live, now time.Time) api.Stats {
	s := l.Summary
	var up *api.UploadStats
	if u := s.WARCUploads; u != nil {
		up = &api.UploadStats{Files: u.Files, Bytes: u.Bytes, Failures: u.Failed}
	}
	return api.Stats{
		Uploads:        up,
		ElapsedSeconds: s.Elapsed.Seconds(), Paused: l.Paused,
		Pages: s.Pages, RobotsFetches: s.RobotsFetches, Bytes: s.Bytes,
		ByStatus: s.ByStatus, ByOutcome: l.Outcomes, Errors: s.Errors, Rejected: s.Rejected, Robots: s.Robots, Handled: s.Handled,
		Revisits: s.Revisits, RevisitBytes: s.RevisitBytes, EarlierRevisits: s.EarlierRevisits, EarlierBytes: s.EarlierBytes, NearDups: s.NearDups, NotModified: s.NotModified, Recrawls: s.Recrawls,
		Throttled: s.Throttled, Unavailable: s.Unavailable, Strained: s.Strained, GaveUp: s.GaveUp, Traps: s.Traps,
		SeenFalsePos: s.SeenFalsePos, WARCFiles: s.WARCFiles, WARCBytes: s.WARCBytes,
		Frontier: api.FrontierStats{
			Queued: l.Frontier.Queued, InFlight: l.Frontier.InFlight, ActiveHosts: l.Frontier.ActiveHosts,
			ReadyHosts: l.Frontier.ReadyHosts, WaitingHosts: l.Frontier.WaitingHost, ParkedHosts: l.Frontier.ParkedHosts,
			HeldHosts: l.Frontier.HeldHosts, Stored: l.Stored, Wait: waitStatsOf(l.Frontier.Wait, l.Recrawl, now),
		},
	}
}

// waitStatsOf is what the frontier waits for at now, or with nothing
// queued a continuous crawl's next recrawl (rw); nil when it waits for
// nothing.
func waitStatsOf(w frontier.Wait, rw *crawl.RecrawlWait, now time.Time) *api.WaitStats {
	if w.Host == "" && w.Held == 0 && w.Parked == 0 {
		if rw == nil {
			return nil
		}
		t := rw.At.UTC()
		return &api.WaitStats{Until: &t, InSeconds: max(rw.At.Sub(now), 0).Seconds(), Why: "recrawl", Text: rw.Text}
	}
	ws := &api.WaitStats{Host: w.Host, Cause: w.Cause, FailuresOnly: w.Failures, HeldHosts: w.Held, ParkedHosts: w.Parked, Text: w.Text(now)}
	if w.Host != "" {
		t := w.At.UTC()
		ws.Until, ws.InSeconds, ws.Why = &t, max(w.At.Sub(now), 0).Seconds(), w.Why.String()
	}
	if !w.GiveUpAt.IsZero() {
		t := w.GiveUpAt.UTC()
		ws.GiveUpAt = &t
	}
	return ws
}

// Seeds taken while the crawl runs: api.Seeds.

func (a adapter) AddSeeds(urls []string, opts []api.SeedOptions, high bool) ([]api.Verdict, error) {
	var so []seeds.Options
	for i, o := range opts {
		so = append(so, seeds.Options{Scope: scope.Mode(o.Scope), MaxDepth: o.MaxDepth, MaxPages: o.MaxPages, Include: o.Include, Exclude: o.Exclude})
		if err := so[i].Validate(); err != nil {
			return nil, &api.Error{Status: http.StatusBadRequest, Code: "bad_seed_options", Message: fmt.Sprintf("seed %d (%s): %v", i+1, urls[i], err)}
		}
	}
	vs, err := a.crawler.AddSeeds(urls, so, high)
	if err != nil {
		return nil, apiErr(err)
	}
	out := make([]api.Verdict, len(vs))
	for i, v := range vs {
		out[i] = verdictOf(v)
	}
	return out, nil
}

// SeedList implements api.Seeds.
func (a adapter) SeedList(offset, limit int) api.SeedList {
	ss, n, t := a.crawler.SeedList(offset, limit)
	out := api.SeedList{Seeds: make([]api.SeedStatus, len(ss)), Total: n, Totals: api.SeedTotals{Running: t.Running, Done: t.Done, Limit: t.Limit,
		Failing: t.Failing, Pages: t.Pages, Bytes: t.Bytes, Errors: t.Errors, Dropped: t.Dropped}}
	for i, s := range ss {
		out.Seeds[i] = api.SeedStatus{URL: s.URL, ID: uint32(s.ID), State: string(s.State), Pages: s.Pages, Bytes: s.Bytes, Errors: s.Errors, Dropped: s.Dropped,
			Options: api.SeedOptions{Scope: string(s.Opts.Scope), MaxDepth: s.Opts.MaxDepth, MaxPages: s.Opts.MaxPages, Include: s.Opts.Include, Exclude: s.Opts.Exclude}}
	}
	if next := offset + len(ss); len(ss) > 0 && next < n {
		out.Next = next
	}
	return out
}

// The external fetchers' leases: api.Frontier.

func (a adapter) Lease(ctx context.Context, n int, ttl, wait time.Duration) ([]api.Lease, error) {
	ls, err := a.crawler.LeaseExternal(ctx, n, ttl, wait)
	if err != nil {
		return nil, apiErr(err)
	}
	return ls, nil
}

func (a adapter) Complete(id, url string, status int, fetchedAt time.Time, contentHash string) error {
	return apiErr(a.crawler.CompleteExternal(id, url, status, fetchedAt, contentHash))
}

// Recent returns the last fetches as the fetch log writes them:
// api.FetchLog.
func (a adapter) Recent() []json.RawMessage {
	fs := a.crawler.Recent()
	out := make([]json.RawMessage, 0, len(fs))
	for _, x := range fs {
		if b, err := json.Marshal(x); err == nil { // a record of plain fields always marshals
			out = append(out, b)
		}
	}
	return out
}

// The URL records: api.Records.

// urlStatuses are the store's statuses by the names the API filters by.
var urlStatuses = map[string]store.URLStatus{"": 0, "queued": store.URLQueued, "done": store.URLDone, "failed": store.URLFailed, "rejected": store.URLRejected}

func (a adapter) URLs(host, status string, after *api.URLPos, limit int) ([]api.URLRecord, *api.URLPos, error) {
	st, ok := urlStatuses[status]
	if !ok {
		return nil, nil, errors.New("operator: no URL status " + status)
	}
	pos, recs, next, err := a.records.URLs(host, st, (*store.URLPos)(after), limit)
	if err != nil {
		return nil, nil, apiErr(err)
	}
	out := make([]api.URLRecord, len(recs))
	now := time.Now()
	for i, rec := range recs {
		out[i] = urlRecordOf(pos[i], rec, a.records.Estimate(pos[i], rec, now))
	}
	return out, (*api.URLPos)(next), nil
}

func urlRecordOf(pos store.URLPos, rec store.URLRecord, e importance.Estimate) api.URLRecord {
	return api.URLRecord{Pos: api.URLPos(pos), URL: rec.URL, Status: rec.Status.String(), Depth: rec.Depth,
		LastStatus: rec.LastStatus, LastOutcome: rec.LastOutcome, LastFetch: rec.LastFetch, NextCrawl: rec.NextCrawl, InLinks: rec.InLinks,
		Rank: rec.Rank, Estimate: api.Estimate{Rank: e.Rank, InLinkCash: e.Cash, DepthPrior: e.Depth, SitemapPrior: e.Sitemap, Boost: e.Boost}}
}

func (a adapter) Page(pos api.URLPos) (api.Page, error) {
	p, err := a.records.Page(store.URLPos(pos))
	if err != nil {
		return api.Page{}, apiErr(err)
	}
	return pageOf(p), nil
}

func pageOf(p crawl.Page) api.Page {
	out := api.Page{URL: p.Record.URL, Status: p.Record.Status.String(), LastFetch: p.Record.LastFetch, LastStatus: p.Record.LastStatus}
	for _, c := range p.Captures {
		if out.Title == "" {
			out.Title = c.Title
		}
		out.Captures = append(out.Captures, api.Capture{Date: c.Date, HTTPStatus: c.Status, ContentHash: archive.DigestString(c.Digest),
			Revisit: c.Kind == store.CaptureRevisit, BodyKey: api.BodyKey{WARCFile: c.File, Offset: c.Offset, Length: c.Length}})
	}
	return out
}

// The operators' policies: api.Policies.

func (a adapter) Policy(host string) (policy.Policy, bool) { return a.policies.Policy(host) }

func (a adapter) SetPolicy(host string, pol policy.Policy) error {
	return apiErr(a.policies.Set(host, pol))
}

func (a adapter) DeletePolicy(host string) (bool, error) {
	had, err := a.policies.Delete(host)
	return had, apiErr(err)
}
