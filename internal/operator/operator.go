// Package operator hands a crawl to its operator API: it gives
// internal/api one implementation of each of its resources, reading and
// steering a crawl.Crawler and answering in the API's own types, so that
// the API knows nothing of the crawl's packages and the crawl nothing of
// the API.
package operator

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/weft-crawler/weft/internal/api"
	"github.com/weft-crawler/weft/internal/archive"
	"github.com/weft-crawler/weft/internal/crawl"
	"github.com/weft-crawler/weft/internal/frontier"
	"github.com/weft-crawler/weft/internal/history"
	"github.com/weft-crawler/weft/internal/importance"
	"github.com/weft-crawler/weft/internal/policy"
	"github.com/weft-crawler/weft/internal/store"
)

// Resources returns c's resources for its operator API.
func Resources(c *crawl.Crawler) api.Resources {
	return api.Resources{Crawl: whole{c}, Seeds: seeds{c}, Frontier: leases{c}, Hosts: hosts{c.Hosts()}, Fetches: fetches{c},
		URLs: records{c.Records()}, Policies: policies{c.Policies()}}
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

// Each type below adapts what the crawl offers a resource (the Crawler
// for what needs the crawl as a whole, Hosts, Records, Policies) to the
// API's interface of it, converting values and errors; none keeps state.

// whole is the crawl as a whole: api.Crawl.
type whole struct{ c *crawl.Crawler }

func (w whole) Stats() api.Stats     { return statsOf(w.c.Live(), time.Now()) }
func (w whole) Metrics() api.Metrics { return metricsOf(w.c.Metrics()) }
func (w whole) Pause()               { w.c.Pause() }
func (w whole) Resume()              { w.c.Resume() }

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
		Revisits: s.Revisits, NearDups: s.NearDups, NotModified: s.NotModified, Recrawls: s.Recrawls,
		Throttled: s.Throttled, Unavailable: s.Unavailable, Strained: s.Strained, GaveUp: s.GaveUp, Traps: s.Traps,
		SeenFalsePos: s.SeenFalsePos, WARCFiles: s.WARCFiles, WARCBytes: s.WARCBytes,
		Frontier: api.FrontierStats{
			Queued: l.Frontier.Queued, InFlight: l.Frontier.InFlight, ActiveHosts: l.Frontier.ActiveHosts,
			ReadyHosts: l.Frontier.ReadyHosts, WaitingHosts: l.Frontier.WaitingHost, ParkedHosts: l.Frontier.ParkedHosts,
			HeldHosts: l.Frontier.HeldHosts, Stored: l.Stored, Wait: waitStatsOf(l.Frontier.Wait, now),
		},
	}
}

// waitStatsOf is what the frontier waits for at now; nil when it waits
// for nothing.
func waitStatsOf(w frontier.Wait, now time.Time) *api.WaitStats {
	if w.Host == "" && w.Held == 0 && w.Parked == 0 {
		return nil
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

func metricsOf(m crawl.Metrics) api.Metrics {
	out := api.Metrics{
		FetchDuration: api.Histogram(m.FetchDuration), QueueDelay: api.Histogram(m.QueueDelay),
		LinksCut: m.LinksCut, LastHighPriority: m.LastHighPriority, DNSHits: m.DNSHits, DNSMisses: m.DNSMisses,
		SeenCacheHits: m.Seen.CacheHits, BloomFill: m.Seen.FillRatio,
		StatusClasses: crawl.StatusClasses(), ErrorKinds: crawl.ErrorKinds(),
	}
	for _, h := range m.HostErrors {
		out.HostErrors = append(out.HostErrors, api.HostErrors(h))
	}
	for _, h := range m.LinksCutHosts {
		out.LinksCutHosts = append(out.LinksCutHosts, api.HostPages(h))
	}
	return out
}

// seeds takes seeds while the crawl runs: api.Seeds.
type seeds struct{ c *crawl.Crawler }

func (s seeds) AddSeeds(urls []string, high bool) ([]api.Verdict, error) {
	vs, err := s.c.AddSeeds(urls, high)
	if err != nil {
		return nil, apiErr(err)
	}
	out := make([]api.Verdict, len(vs))
	for i, v := range vs {
		out[i] = verdictOf(v)
	}
	return out, nil
}

// leases are the external fetchers' leases: api.Frontier.
type leases struct{ c *crawl.Crawler }

func (l leases) Lease(ctx context.Context, n int, ttl, wait time.Duration) ([]api.Lease, error) {
	ls, err := l.c.LeaseExternal(ctx, n, ttl, wait)
	if err != nil {
		return nil, apiErr(err)
	}
	out := make([]api.Lease, len(ls))
	for i, x := range ls {
		out[i] = api.Lease(x)
	}
	return out, nil
}

func (l leases) Complete(id, url string, status int, fetchedAt time.Time, contentHash string) error {
	return apiErr(l.c.CompleteExternal(id, url, status, fetchedAt, contentHash))
}

// hosts is api.Hosts.
type hosts struct{ h *crawl.Hosts }

func (h hosts) Host(host string) api.HostStatus { return api.HostStatus(h.h.Host(host)) }

func (h hosts) Hosts(limit int) []api.HostStatus {
	sts := h.h.List(limit)
	out := make([]api.HostStatus, len(sts))
	for i, st := range sts {
		out[i] = api.HostStatus(st)
	}
	return out
}

func (h hosts) Hold(host string, on bool) (string, error)     { return h.h.Hold(host, on) }
func (h hosts) Activity(host string) (history.Activity, bool) { return h.h.Activity(host) }

// fetches is the fetch log: api.FetchLog.
type fetches struct{ c *crawl.Crawler }

// Recent returns the last fetches as the fetch log writes them.
func (f fetches) Recent() []json.RawMessage {
	fs := f.c.Recent()
	out := make([]json.RawMessage, 0, len(fs))
	for _, x := range fs {
		if b, err := json.Marshal(x); err == nil { // a record of plain fields always marshals
			out = append(out, b)
		}
	}
	return out
}

// records is api.Records.
type records struct{ r *crawl.Records }

// urlStatuses are the store's statuses by the names the API filters by.
var urlStatuses = map[string]store.URLStatus{"": 0, "queued": store.URLQueued, "done": store.URLDone, "failed": store.URLFailed, "rejected": store.URLRejected}

func (r records) URLs(host, status string, after *api.URLPos, limit int) ([]api.URLRecord, *api.URLPos, error) {
	st, ok := urlStatuses[status]
	if !ok {
		return nil, nil, errors.New("operator: no URL status " + status)
	}
	pos, recs, next, err := r.r.URLs(host, st, (*store.URLPos)(after), limit)
	if err != nil {
		return nil, nil, apiErr(err)
	}
	out := make([]api.URLRecord, len(recs))
	now := time.Now()
	for i, rec := range recs {
		out[i] = urlRecordOf(pos[i], rec, r.r.Estimate(pos[i], rec, now))
	}
	return out, (*api.URLPos)(next), nil
}

func urlRecordOf(pos store.URLPos, rec store.URLRecord, e importance.Estimate) api.URLRecord {
	return api.URLRecord{Pos: api.URLPos(pos), URL: rec.URL, Status: rec.Status.String(), Depth: rec.Depth,
		LastStatus: rec.LastStatus, LastOutcome: rec.LastOutcome, LastFetch: rec.LastFetch, NextCrawl: rec.NextCrawl, InLinks: rec.InLinks,
		Rank: rec.Rank, Estimate: api.Estimate{Rank: e.Rank, InLinkCash: e.Cash, DepthPrior: e.Depth, SitemapPrior: e.Sitemap, Boost: e.Boost}}
}

func (r records) Page(pos api.URLPos) (api.Page, error) {
	p, err := r.r.Page(store.URLPos(pos))
	if err != nil {
		return api.Page{}, apiErr(err)
	}
	return pageOf(p), nil
}

func pageOf(p crawl.Page) api.Page {
	out := api.Page{URL: p.Record.URL, Status: p.Record.Status.String(), LastFetch: p.Record.LastFetch, LastStatus: p.Record.LastStatus}
	for _, c := range p.Captures {
		out.Captures = append(out.Captures, api.Capture{Date: c.Date, HTTPStatus: c.Status, ContentHash: archive.DigestString(c.Digest),
			Revisit: c.Kind == store.CaptureRevisit, BodyKey: api.BodyKey{WARCFile: c.File, Offset: c.Offset, Length: c.Length}})
	}
	return out
}

// policies is api.Policies.
type policies struct{ p *crawl.Policies }

func (p policies) Policy(host string) (policy.Policy, bool) { return p.p.Policy(host) }

func (p policies) SetPolicy(host string, pol policy.Policy) error {
	return apiErr(p.p.Set(host, pol))
}

func (p policies) DeletePolicy(host string) (bool, error) {
	had, err := p.p.Delete(host)
	return had, apiErr(err)
}
