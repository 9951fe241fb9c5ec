package api

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/weft-crawler/weft/internal/history"
	"github.com/weft-crawler/weft/internal/live"
	"github.com/weft-crawler/weft/internal/policy"
)

// Resources are what a Server serves of a crawl, one interface per
// resource. Each is safe for concurrent use: the server calls them from
// its requests and its sampler at once.
type Resources struct {
	Crawl    Crawl    // GET /v1/stats, /v1/history and /metrics; POST /v1/pause and /v1/resume
	Seeds    Seeds    // POST /v1/seeds
	Frontier Frontier // POST /v1/frontier/lease and /v1/frontier/complete
	Hosts    Hosts    // GET /v1/hosts and /v1/hosts/{host}; POST /v1/hosts/{host}/pause and resume
	Fetches  FetchLog // GET /v1/fetches
	URLs     Records  // GET /v1/urls and /v1/pages/{url_hash}
	Policies Policies // GET, PUT and DELETE /v1/policies/{host}
}

// The errors a resource answers with that the API tells apart; any other
// is an internal error (500), but where a method says otherwise.
var (
	// ErrNotRunning: the crawl does not take work now (before its Run
	// has taken its seeds, or after it ended), or can no longer read its
	// store. The API answers 503 not_running.
	ErrNotRunning = errors.New("api: the crawl is not running")
	// ErrUnknownURL: Records.Page knows no URL at that position (404).
	ErrUnknownURL = errors.New("api: no such URL")
	// ErrUnknownLease: no such lease is out (404): never given, expired,
	// or for another URL.
	ErrUnknownLease = errors.New("api: no such lease out")
)

// Crawl is the crawl as a whole: its counters, measurements and pause.
type Crawl interface {
	// Stats returns the crawl's counters since it started and its
	// frontier now; Cluster is left for the server to fill.
	Stats() Stats
	// Metrics returns its measurements beyond the counters.
	Metrics() Metrics
	// Pause stops the workers taking new leases (the fetches in flight
	// finish); Resume lets them again. Either is a no-op when the crawl
	// is already so.
	Pause()
	Resume()
}

// The crawl's measurements and what it knows of a host are package live's
// types, which the crawl produces as the API serves them.
type (
	// Metrics are the crawl's measurements beyond Stats, for /metrics and
	// the history's latency chart.
	Metrics    = live.Metrics
	Histogram  = live.Histogram
	HostErrors = live.HostErrors
	HostPages  = live.HostPages
	// HostStatus is what the crawl knows of one host now.
	HostStatus = live.HostStatus
)

// Seeds takes seeds while the crawl runs.
type Seeds interface {
	// AddSeeds offers urls as seeds, high priority or normal, each judged
	// as a seed of the command line is, with its own limits from opts
	// (nil, or one per URL: the zero SeedOptions has the crawl's), and
	// returns a verdict per URL, in order; ErrNotRunning when the crawl
	// does not take work.
	AddSeeds(urls []string, opts []SeedOptions, high bool) ([]Verdict, error)
	// SeedList is the state of at most limit seeds from offset, in the
	// order they were given, and the totals of all.
	SeedList(offset, limit int) SeedList
}

// Verdict is what became of a URL offered as a seed.
type Verdict struct {
	URL string // canonical when it parsed, else as given
	// Reason is "" for a URL accepted; else the class of its refusal, and
	// Code and Message say it as Rejected does.
	Reason, Code, Message string
}

// Frontier hands URLs to external fetchers and takes what they got.
type Frontier interface {
	// Lease hands out up to n URLs, each for ttl, waiting at most wait
	// for the first (or until ctx is done); none while the crawl is
	// paused. ErrNotRunning when the crawl does not take work.
	Lease(ctx context.Context, n int, ttl, wait time.Duration) ([]Lease, error)
	// Complete ends lease id, which must be of url, with what its fetcher
	// got: the HTTP status (0 for no response) and the content's hash.
	// ErrUnknownLease for a lease not out; completing one twice with the
	// same URL does nothing the second time.
	Complete(id, url string, status int, fetchedAt time.Time, contentHash string) error
}

// Lease is a URL handed to an external fetcher.
type Lease = live.Lease

// Hosts is what the crawl knows of its hosts, and the holds an operator
// puts on them. A host is named as in its URLs: an authority,
// host[:port], lowercase.
type Hosts interface {
	// Host returns what the crawl knows of host now.
	Host(host string) HostStatus
	// Hosts returns the hosts the frontier holds, those with the most
	// URLs in memory first, at most limit.
	Hosts(limit int) []HostStatus
	// Hold holds host (on) or lets it go: its queue and clock are kept, a
	// fetch in flight finishes. It returns the host's name as its URLs
	// have it, or why host is not one.
	Hold(host string, on bool) (string, error)
	// Activity returns host's recent fetches, counts and parks, while the
	// crawl keeps them (the hosts fetched most recently).
	Activity(host string) (history.Activity, bool)
}

// FetchLog is the crawl's log of fetches.
type FetchLog interface {
	// Recent returns the last fetches, newest first, each a line of the
	// crawl's fetch log (fetches.jsonl) as it writes them.
	Recent() []json.RawMessage
}

// Records are the crawl's URL records and their captures.
type Records interface {
	// URLs returns up to limit records in key order after the position
	// after (from the start when nil): every host's or only host's, every
	// status or only status's (queued, done, failed, rejected; "" for
	// all). It returns where it stopped, to go on from, or nil when
	// nothing is left; it may stop short of limit, having read as much as
	// one call may. ErrNotRunning once the store is closed.
	URLs(host, status string, after *URLPos, limit int) ([]URLRecord, *URLPos, error)
	// Page returns the URL at pos, with its captures newest first;
	// ErrUnknownURL when there is none, ErrNotRunning once the store is
	// closed.
	Page(pos URLPos) (Page, error)
}

// URLPos is where a URL's record lies in the crawl's key order: its
// partition, host and hash. A URL's url_hash is its position, encoded.
type URLPos struct {
	Part uint16
	Host string
	Hash [16]byte
}

// URLRecord is what the crawl keeps of one URL.
type URLRecord struct {
	Pos         URLPos
	URL         string
	Status      string // queued, done, failed or rejected
	Depth       int
	LastStatus  int    // the HTTP status of its last fetch, 0 for none
	LastOutcome string // its last fetch's outcome, as the fetch log says it
	LastFetch   time.Time
	NextCrawl   time.Time
	InLinks     int
	// Rank is the rank it was queued with, its boost included: when it
	// was admitted, or that of its lease last done (0 for a seed, or one
	// queued before ranks were kept); Estimate the rank it would be
	// queued with now, and why.
	Rank     uint32
	Estimate Estimate
}

// Page is one URL's record and its captures.
type Page struct {
	URL        string
	Status     string
	LastFetch  time.Time
	LastStatus int
	Title      string    // an HTML page's <title> at its latest capture that had one
	Captures   []Capture // newest first
}

// Policies are the operators' per-host policies, which only ever tighten
// the crawl.
type Policies interface {
	// Policy returns host's own policy, and false if it has none.
	Policy(host string) (policy.Policy, bool)
	// SetPolicy sets host's policy, in force at once and kept across a
	// restart. ErrNotRunning once the crawl can no longer keep it; any
	// other error says why the policy is refused (it would loosen the
	// crawl), and nothing changed.
	SetPolicy(host string, p policy.Policy) error
	// DeletePolicy removes host's policy and reports whether it had one.
	DeletePolicy(host string) (bool, error)
}
