// Package live holds what a running crawl shows of itself beyond its
// counters, and hands out: its measurements (Metrics), what it knows of a
// host (HostStatus), a URL leased to an external fetcher (Lease), a node
// of its cluster (ClusterMember). The
// crawl produces these values and the operator API serves them as they
// are, so each is defined once, here, below both: the API imports neither
// the crawl nor its store, and the crawl nothing of the API.
package live

import (
	"time"

	"github.com/weft-crawler/weft/internal/frontier"
	"github.com/weft-crawler/weft/internal/robots"
)

// Metrics are the crawl's measurements beyond its counters, for /metrics
// and the history's latency chart.
type Metrics struct {
	FetchDuration Histogram // from request to the end of the body
	QueueDelay    Histogram // from a URL's queueing to its lease
	// HostErrors are the hosts with the most 429 and 5xx answers, most
	// first, a bounded number of them.
	HostErrors []HostErrors
	// LinksCut counts the HTML pages cut at the per-page link cap, and
	// LinksCutHosts the hosts with the most, a bounded number of them.
	LinksCut      int64
	LinksCutHosts []HostPages
	// LastHighPriority is when the last high-priority URL (a seed, a page
	// a sitemap says changed) was fetched; zero if none was.
	LastHighPriority time.Time
	DNSHits          int64   // host lookups the DNS cache answered
	DNSMisses        int64   // and sent to the resolver
	SeenCacheHits    int64   // links to URLs already seen answered by the seen set's cache
	BloomFill        float64 // fraction of the seen set's Bloom filter bits set
	// StatusClasses and ErrorKinds are the keys the counters of responses
	// by status class and of errors by kind may have, known in advance,
	// so that a metric counts each from the start, at 0.
	StatusClasses, ErrorKinds []string
}

// Histogram is a snapshot of durations counted in buckets.
type Histogram struct {
	Bounds []float64 // upper bounds in seconds
	Counts []uint64  // cumulative: observations at or under each bound
	Count  uint64
	Sum    float64 // seconds
}

// HostErrors counts a host's 429 and 5xx answers.
type HostErrors struct {
	Host         string
	Throttled    int64 // 429
	ServerErrors int64 // 5xx
}

// HostPages counts a host's pages that something happened to (cut at
// the link cap, in Metrics).
type HostPages struct {
	Host  string `json:"host"`
	Pages int64  `json:"pages"`
}

// HostStatus is what the crawl knows of one host now. A host is named as
// in its URLs: an authority, host[:port], lowercase.
type HostStatus struct {
	Host string
	// Known: the frontier, the robots.txt cache or the host cap knows it.
	Known    bool
	Frontier frontier.HostInfo
	// Gap is the least time between two requests to it now:
	// max(--delay, Crawl-delay, backoff).
	Gap time.Duration
	// Robots is the robots.txt answer its https URLs are judged by now,
	// else its http URLs' (each scheme has its own file), nil if there is
	// none (never fetched, expired, or failing and retried).
	Robots *robots.Policy
	// Accepted counts the URLs accepted for it this run (the host cap's
	// count).
	Accepted int64
}

// ClusterMember is a live node of a cluster, as its lease bucket lists it:
// where its operator API answers and the partitions it holds. The cluster
// reads it and the API serves it.
type ClusterMember struct {
	Node       string
	API        string // host:port of its operator API; "" if it has none
	Partitions []int  // leases held in its name, in order
}

// Lease is a URL handed to an external fetcher, until Expires.
type Lease struct {
	ID      string
	URL     string
	Host    string
	Depth   int
	Expires time.Time
}
