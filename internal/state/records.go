package state

import (
	"errors"
	"time"

	"github.com/weft-crawler/weft/internal/canon"
	"github.com/weft-crawler/weft/internal/importance"
	"github.com/weft-crawler/weft/internal/lifecycle"
	"github.com/weft-crawler/weft/internal/partition"
	"github.com/weft-crawler/weft/internal/store"
)

// Records are the crawl's URL records and their captures, as its operator
// reads them. State.Records returns them; they are safe for concurrent
// use, and read nothing once the crawl has closed its store
// (lifecycle.ErrNotRunning).
type Records struct {
	db    *store.DB
	canon *canon.Canonicalizer // a record's URL to its captures' key
	parts int
	life  *lifecycle.State
	rank  *importance.Estimator // what a URL's in-links gave it so far
	boost Booster
}

// Records returns the URL records for the crawl's operator: c gives a
// record's URL its captures' key, life says when the store is closed,
// rank and boost what a URL would be queued with now.
func (d *State) Records(c *canon.Canonicalizer, life *lifecycle.State, rank *importance.Estimator, boost Booster) *Records {
	return &Records{db: d.DB, canon: c, parts: d.parts, life: life, rank: rank, boost: boost}
}

// Estimate is the rank the URL of rec, at pos, would be queued with now,
// and its parts: its cash now, its priors, the boost in force.
func (r *Records) Estimate(pos store.URLPos, rec store.URLRecord, now time.Time) importance.Estimate {
	return importance.Explain(r.rank.Cash(pos.Hash), rec.Depth, importance.ListedIf(rec.InSitemap, rec.SitemapPriority, rec.SitemapLastMod, now), r.boost.BoostURL(pos.Host, rec.URL))
}

// maxURLScan bounds the records one URLs call reads looking for a status.
const maxURLScan = 100_000

// URLs returns up to limit URL records in key order (partition, host,
// hash) after the position after (from the start when it is nil): every
// host's, or only host's; every status, or only status's (when it is not
// zero). It reads at most maxURLScan records, and returns where it
// stopped, to go on from, or nil when nothing is left.
func (r *Records) URLs(host string, status store.URLStatus, after *store.URLPos, limit int) ([]store.URLPos, []store.URLRecord, *store.URLPos, error) {
	ph := r.life.Hold()
	defer r.life.Release()
	if ph.Closed {
		return nil, nil, nil, lifecycle.ErrNotRunning
	}
	var part uint16
	if host != "" {
		part = uint16(partition.Of(host, r.parts))
	}
	return r.db.ListURLs(host, part, status, after, limit, maxURLScan)
}

// Page is what the crawl holds of one URL: its record and its captures
// in the capture index, newest first (at most maxPageCaptures).
type Page struct {
	Record   store.URLRecord
	Captures []store.CaptureRecord
}

const maxPageCaptures = 20

// ErrUnknownURL is returned by Page for a URL the crawl has no record of.
var ErrUnknownURL = errors.New("state: no such URL")

// Page returns the record and the captures of the URL at pos (as URLs
// lists them).
func (r *Records) Page(pos store.URLPos) (Page, error) {
	ph := r.life.Hold()
	defer r.life.Release()
	if ph.Closed {
		return Page{}, lifecycle.ErrNotRunning
	}
	rec, ok, err := r.db.GetURL(pos.Part, pos.Host, pos.Hash)
	if err != nil {
		return Page{}, err
	}
	if !ok {
		return Page{}, ErrUnknownURL
	}
	p := Page{Record: rec}
	if u, err := r.canon.Parse(rec.URL); err == nil {
		p.Captures, err = r.db.LastCaptures(u.SURT(), maxPageCaptures)
		return p, err
	}
	return p, nil
}
