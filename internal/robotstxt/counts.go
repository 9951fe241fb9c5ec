package robotstxt

import (
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/weft-crawler/weft/internal/report"
)

// Counts is what the robots.txt fetches did so far (Files.Counts).
type Counts struct {
	Fetches int64 // robots.txt requests
	Bytes   int64 // body bytes received (wire, still encoded)
	// Failed counts the requests that got no response, Errors the same
	// by kind (fetch.Kind's names); LastError is the last of them,
	// "host: kind", at LastErrorAt.
	Failed      int64
	Errors      map[string]int64
	LastError   string
	LastErrorAt time.Time
	Outcomes    map[string]int64   // fetch outcomes: rules, no-rules, disallow-all (each retry counts)
	Cut         int64              // files longer than robots.MaxBytes, read in part
	Hops        int64              // redirect hops followed
	Retries     int64              // failed fetches that left the host waiting for a retry
	LastGood    int64              // unreachable files replaced by the last good copy (or by none)
	HostsDown   map[string]int64   // hosts not crawled because their robots.txt failed, by cause
	DownNamed   []report.HostCause // of which the first report.MaxNamed, with what failed
}

// counts are the running totals behind Counts, bumped by the workers
// without a shared lock on the hot path (atomics; the maps, small and
// bounded by their label sets, behind a short one).
type counts struct {
	fetches, bytes, failed, cut, hops, retries, lastGood atomic.Int64

	mu          sync.Mutex
	errors      map[string]int64
	lastError   string
	lastErrorAt time.Time
	outcomes    map[string]int64
	hostsDown   map[string]int64
	downNamed   []report.HostCause
	downOnly    map[string]bool // hosts counted by downOnce
}

func newCounts() *counts {
	return &counts{errors: map[string]int64{}, outcomes: map[string]int64{}, hostsDown: map[string]int64{}}
}

// fail counts a request that got no response: an error of its kind, the
// last error.
func (c *counts) fail(host, kind string) {
	c.failed.Add(1)
	c.mu.Lock()
	c.errors[kind]++
	c.lastError, c.lastErrorAt = host+": "+kind, time.Now()
	c.mu.Unlock()
}

func (c *counts) outcome(o string) {
	c.mu.Lock()
	c.outcomes[o]++
	c.mu.Unlock()
}

// down counts a host whose robots.txt became unreachable, and names it
// among the first report.MaxNamed.
func (c *counts) down(h report.HostCause) {
	c.mu.Lock()
	c.hostsDown[h.Cause]++
	if len(c.downNamed) < report.MaxNamed {
		c.downNamed = append(c.downNamed, h)
	}
	c.mu.Unlock()
}

// downOnce is down for a host not counted by downOnce before; it reports
// whether it counted it.
func (c *counts) downOnce(h report.HostCause) bool {
	c.mu.Lock()
	if c.downOnly[h.Host] {
		c.mu.Unlock()
		return false
	}
	if c.downOnly == nil {
		c.downOnly = map[string]bool{}
	}
	c.downOnly[h.Host] = true
	c.mu.Unlock()
	c.down(h)
	return true
}

func (c *counts) snapshot() Counts {
	c.mu.Lock()
	defer c.mu.Unlock()
	return Counts{
		Fetches: c.fetches.Load(), Bytes: c.bytes.Load(), Failed: c.failed.Load(),
		Errors: maps.Clone(c.errors), LastError: c.lastError, LastErrorAt: c.lastErrorAt,
		Outcomes: maps.Clone(c.outcomes), Cut: c.cut.Load(), Hops: c.hops.Load(), Retries: c.retries.Load(), LastGood: c.lastGood.Load(),
		HostsDown: maps.Clone(c.hostsDown), DownNamed: slices.Clone(c.downNamed),
	}
}
