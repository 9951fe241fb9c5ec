package schedule

import (
	"crypto/sha1"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/weft-crawler/weft/internal/archive"
	"github.com/weft-crawler/weft/internal/canon"
	"github.com/weft-crawler/weft/internal/fetch"
	"github.com/weft-crawler/weft/internal/frontier"
	"github.com/weft-crawler/weft/internal/partition"
	"github.com/weft-crawler/weft/internal/recrawl"
	"github.com/weft-crawler/weft/internal/robots"
	"github.com/weft-crawler/weft/internal/robotstxt"
	"github.com/weft-crawler/weft/internal/seen"
	"github.com/weft-crawler/weft/internal/store"
)

// Continuous mode (Config.Policy): a fetched page is due again at a time
// learnt from how often it changed, is asked for with the validators of
// its last 200 (a 304 is archived as a server-not-modified revisit and not
// parsed), and re-enters the front queues when due, through the same back
// queues and clocks as every other URL.

// Config is what a Planner works with. DB, Canon, Robots and Archive are
// required.
type Config struct {
	// Policy is the crawl's recrawl policy; nil when the crawl is not
	// continuous: then the Planner builds no recrawl index and serves
	// only PreviousVisit and VisitedElsewhere.
	Policy *recrawl.Policy
	// RobotsTTL is how long a robots.txt is kept: a missing sitemap is
	// asked for again once per RobotsTTL.
	RobotsTTL time.Duration
	// SharedVisits says that other nodes fetch this crawl's URLs too (a
	// cluster): a lease first looks for their visits (VisitedElsewhere).
	SharedVisits bool
	// Partitions is the crawl's partition count (the store's).
	Partitions int
	DB         *store.DB
	Canon      *canon.Canonicalizer
	// Robots holds the sitemaps each host's robots.txt names.
	Robots Robots
	// Archive says whether a capture can still be referred to.
	Archive Archive
	// InLinks counts the URLs' in-links; nil when they are not counted.
	InLinks *InLinks
	Log     *slog.Logger
}

// Robots is the robots.txt cache, read for the sitemaps a host's file
// names.
type Robots interface {
	// Cached returns the policy held for origin (robotstxt.Origin) at
	// now, nil when none is held; it fetches nothing.
	Cached(origin string, now time.Time) *robots.Policy
}

// Archive is the crawl's archive, asked about a capture a URL's record
// refers to.
type Archive interface {
	// StillArchived reports whether the capture first can still be
	// referred to by a revisit record (a crash may have cut it off).
	StillArchived(first store.DigestRecord) bool
}

// Planner says when each URL of a continuous crawl is due again: the
// configured policy, with each host's prior (what its pages have shown)
// in place of the configured one, weighed by each URL's importance (its
// in-links, a seed, what a sitemap said). It learns from every lease that
// ends (Learn, KeepVisit), and builds the recrawl index when it is made
// (New). A Recrawler queues what it makes due. Its methods are safe for
// concurrent use.
type Planner struct {
	configured *recrawl.Policy // Config.Policy: nil when the crawl is not continuous
	robotsTTL  time.Duration   // a missing sitemap is asked for again once per RobotsTTL
	shared     bool            // Config.SharedVisits: other nodes fetch this crawl's URLs too
	parts      int
	db         *store.DB
	canon      *canon.Canonicalizer
	robots     Robots // the sitemaps each robots.txt names
	arch       Archive
	priors     *hostPriors
	inlinks    *InLinks // nil when in-links are not counted
	log        *slog.Logger
}

// New makes the Planner and, in a continuous crawl, the recrawl index:
// an entry for every fetched URL, scheduled by cfg.Policy (see
// prepareDueIndex). The in-link counts, which weigh in, must be loaded
// first.
func New(cfg Config) (*Planner, error) {
	log := cfg.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	p := &Planner{
		configured: cfg.Policy, robotsTTL: cfg.RobotsTTL, shared: cfg.SharedVisits, parts: cfg.Partitions, db: cfg.DB,
		canon: cfg.Canon, robots: cfg.Robots, arch: cfg.Archive, priors: newHostPriors(cfg.DB, cfg.Partitions), inlinks: cfg.InLinks, log: log,
	}
	if err := p.prepareDueIndex(); err != nil {
		return nil, err
	}
	return p, nil
}

// PreviousVisit returns the URL's record, the capture that holds the
// payload it last had, and the conditional request headers they allow:
// validators are sent only while that capture can be referred to, so a 304
// always has a payload to stand for (else the page is fetched whole).
func (s *Planner) PreviousVisit(l frontier.Lease) (store.URLRecord, store.DigestRecord, http.Header) {
	part := partition.Of(l.Host, s.parts)
	prev, ok, err := s.db.GetURL(uint16(part), l.Host, seen.KeyOf(l.URL))
	if err != nil || !ok || prev.Digest == ([sha1.Size]byte{}) || (prev.ETag == "" && prev.LastModified == "") {
		return prev, store.DigestRecord{}, nil
	}
	first, ok, err := s.db.GetDigest(prev.Digest)
	if err != nil || !ok || !s.arch.StillArchived(first) {
		return prev, store.DigestRecord{}, nil
	}
	hdr := http.Header{}
	if prev.ETag != "" {
		hdr.Set("If-None-Match", prev.ETag)
	}
	if prev.LastModified != "" {
		hdr.Set("If-Modified-Since", prev.LastModified)
	}
	return prev, first, hdr
}

// KeepVisit is the record of a lease that ended without a response (an
// error, or a refusal: robots.txt, a policy): the URL keeps its validators
// and, after an error, is due again as a URL whose visit got no answer:
// one more error in a row, backed off as any error is (see Learn). A
// refused URL is marked rejected by its lease's end, and leaves the
// recrawl.
func (s *Planner) KeepVisit(l frontier.Lease) *Visit {
	part := partition.Of(l.Host, s.parts)
	v, _, err := s.db.GetURL(uint16(part), l.Host, seen.KeyOf(l.URL))
	if err != nil {
		v = store.URLRecord{}
	}
	prevDue := Scheduled(v)
	v.Depth = l.Depth
	h := history(v)
	h.ObserveError(time.Now(), false)
	keepHistory(&v, h)
	v.LastFetch = h.Last
	w := s.Importance(l.URL, &v)
	v.NextCrawl = s.policy(l.Host).Next(l.URL, h, w)
	return &Visit{Record: v, Importance: w, prevDue: prevDue}
}

// Importance is what the crawler knows of a URL's importance (see
// recrawl.Importance): its in-links, whether it is a seed, and what a
// sitemap said. The in-link count is kept in r, so that it survives a
// loss of the counter's latest counts.
func (s *Planner) Importance(url string, r *store.URLRecord) float64 {
	if s.inlinks != nil {
		r.InLinks = max(r.InLinks, s.inlinks.Count(seen.KeyOf(url)))
	}
	sig := recrawl.Signals{InLinks: r.InLinks, Seed: r.Depth == 0, Priority: -1}
	if r.InSitemap {
		sig.Priority = r.SitemapPriority
	}
	return recrawl.Importance(sig)
}

// Seen is what a visit found of the page, besides the answer.
type Seen struct {
	Capture     archive.Capture // the capture archived of the answer
	Text        uint64          // the hash of its visible words and links (extract.TextHash, AddLinks); 0 if it was not read whole
	NotModified bool            // the answer was a 304 to a conditional request
}

// Learn folds a visit into the URL's history and sets its next crawl:
// prev is its record before the lease, resp the answer, seen what it
// found. A 200 found a change when its payload differs from the last
// one's, unless the visible text and links of both were read and are the
// same: a token, a nonce or a time in a comment or an attribute, which
// many pages change on every answer, is not a change of the page, and
// would otherwise have it fetched again as often as --recrawl-min
// allows.
func (s *Planner) Learn(l frontier.Lease, prev store.URLRecord, resp *fetch.Response, seen Seen) *Visit {
	cp, notModified := seen.Capture, seen.NotModified
	h := history(prev)
	v := prev
	v.Depth = l.Depth
	switch {
	case notModified:
		modified := httpDate(resp.Header.Get("Last-Modified"))
		if modified.IsZero() {
			modified = httpDate(prev.LastModified) // a 304 need not repeat it
		}
		h.ObserveModified(resp.Start, false, modified, httpDate(resp.Header.Get("Date")))
		if et := resp.Header.Get("ETag"); et != "" {
			v.ETag = et
		}
	case resp.StatusCode >= 200 && resp.StatusCode < 300 && resp.Truncated == "":
		text := seen.Text
		if text == 0 && cp.Digest == prev.Digest {
			text = prev.TextHash // the same bytes, not read again (a revisit): the same text
		}
		changed := cp.Digest != prev.Digest && (text == 0 || text != prev.TextHash)
		h.ObserveModified(resp.Start, changed, httpDate(resp.Header.Get("Last-Modified")), httpDate(resp.Header.Get("Date")))
		v.Digest, v.TextHash = cp.Digest, text
		v.ETag, v.LastModified = resp.Header.Get("ETag"), resp.Header.Get("Last-Modified")
	case resp.StatusCode >= 400:
		// An error: no page to learn from, and one more error in a row,
		// so that a URL that keeps failing is visited less and less,
		// faster than an unchanging page (recrawl.Policy.ErrorBackoff):
		// a 404 or 410 fastest, as the page is not there.
		h.ObserveError(resp.Start, notThere(resp.StatusCode))
	default:
		// A redirect, or a page cut short: counted as a visit that found
		// nothing new, so a page that moved for good is visited less and
		// less, as an unchanging one is.
		h.Observe(resp.Start, false)
	}
	keepHistory(&v, h)
	w := s.Importance(l.URL, &v)
	sitemap := missingSitemap(resp.StatusCode) && s.isSitemap(l)
	var prior *store.PriorRecord
	content := notModified || (resp.StatusCode >= 200 && resp.StatusCode < 300 && resp.Truncated == "")
	if content && h.Last.After(prev.LastFetch) && !prev.LastFetch.IsZero() {
		// What the page showed is what its host shows: pooled into the
		// host's prior, the rate its new pages start from. Errors and
		// redirects say nothing of how its pages change.
		r := s.priors.observe(l.Host, history(prev), h)
		prior = &r
	}
	v.NextCrawl = s.policy(l.Host).Next(l.URL, h, w)
	if sitemap {
		v.NextCrawl = resp.Start.Add(s.robotsTTL)
	}
	v.LastFetch = resp.Start
	return &Visit{Record: v, Importance: w, prevDue: Scheduled(prev), First: cp.First, prior: prior}
}

// history is the change history a URL's record keeps. Whether its errors
// in a row ended with the page gone is its last status's.
func history(r store.URLRecord) recrawl.History {
	return recrawl.History{Visits: r.Visits, Changes: r.Changes, Span: r.Span, Last: r.LastFetch, Unchanged: r.Unchanged,
		Errors: r.Errors, Gone: r.Errors > 0 && notThere(r.LastStatus), Dating: recrawl.Dating(r.Dating)}
}

// keepHistory writes h's counts into r (history's inverse, but for Last,
// which is r's LastFetch, and Gone, which is its LastStatus).
func keepHistory(r *store.URLRecord, h recrawl.History) {
	r.Visits, r.Changes, r.Span, r.Unchanged, r.Errors = h.Visits, h.Changes, h.Span, h.Unchanged, h.Errors
	r.Dating = store.Dating(h.Dating)
}

// httpDate parses an HTTP date header's value; zero if it is absent or
// not a date.
func httpDate(v string) time.Time {
	if v == "" {
		return time.Time{}
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return time.Time{}
	}
	return t
}

// Prior is what host's pages have shown of how often they change, pooled
// (recrawl.HostPrior): the rate its new pages start from.
func (s *Planner) Prior(host string) recrawl.HostPrior { return s.priors.get(host) }

// policy is the recrawl policy for a page of host: the configured one,
// with the host's prior (recrawl.HostPrior: what its pages have shown,
// pooled) in place of the configured prior once the host has shown
// enough; the configured prior is the host prior's own fallback.
func (s *Planner) policy(host string) recrawl.Policy {
	p := s.configured.WithDefaults()
	p.Prior = s.priors.get(host).Rate(p.Prior)
	return p
}

// missingSitemap reports whether a sitemap's status says it is not there
// (404 or 410): most sites have no /sitemap.xml, and a crawler that asks
// for it as often as for a page asks in vain. It is asked for again on the
// robots.txt schedule, once per RobotsTTL, as the robots.txt that names
// sitemaps is read again: a site that adds one is heard of that soon.
func missingSitemap(status int) bool { return notThere(status) }

// notThere reports whether a status says the URL names nothing (404 Not
// Found, 410 Gone).
func notThere(status int) bool {
	return status == http.StatusNotFound || status == http.StatusGone
}

// isSitemap reports whether a lease is of a host's sitemap: its
// /sitemap.xml, one its robots.txt names, or one queued from its
// robots.txt. A sitemap an index lists is not judged here:
// the index is fetched again as often as its own schedule says.
func (s *Planner) isSitemap(l frontier.Lease) bool {
	if strings.HasSuffix(l.Via, "/robots.txt") || isSitemapPath(l.URL) {
		return true
	}
	u, err := s.canon.Parse(l.URL)
	if err != nil {
		return false
	}
	pol := s.robots.Cached(robotstxt.Origin(u.Scheme, l.Host), time.Now())
	return pol != nil && slices.Contains(pol.Sitemaps, l.URL)
}

// isSitemapPath reports whether url is a host's /sitemap.xml.
func isSitemapPath(url string) bool {
	rest, ok := strings.CutPrefix(url, "http://")
	if !ok {
		rest, ok = strings.CutPrefix(url, "https://")
	}
	_, path, _ := strings.Cut(rest, "/")
	return ok && path == "sitemap.xml"
}
