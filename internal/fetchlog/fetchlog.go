// Package fetchlog is the crawl's fetch log, fetches.jsonl: a line for
// every fetch attempt, the last of them kept for the operator API, and
// counts by outcome.
package fetchlog

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"sync"
	"time"

	recent "github.com/weft-crawler/weft/internal/history"
)

// Record is one line of fetches.jsonl, one per fetch attempt: the
// URL asked, what came back (status, outcome, bytes, type, digest) and
// how long it took.
type Record struct {
	Time        time.Time `json:"time"`
	URL         string    `json:"url"`
	Host        string    `json:"host"`
	Status      int       `json:"status,omitempty"`
	Bytes       int       `json:"bytes"`
	DurationMS  int64     `json:"duration_ms"`
	Outcome     string    `json:"outcome"`
	Error       string    `json:"error,omitempty"`
	Depth       int       `json:"depth"`
	Hops        int       `json:"hops,omitempty"`
	Via         string    `json:"via,omitempty"`
	Location    string    `json:"location,omitempty"`
	ContentType string    `json:"content_type,omitempty"`
	SHA256      string    `json:"sha256,omitempty"`
	NearDupOf   string    `json:"near_dup_of,omitempty"`
	Truncated   string    `json:"truncated,omitempty"`
	Links       int       `json:"links,omitempty"`
	NoIndex     bool      `json:"noindex,omitempty"`
	NoFollow    bool      `json:"nofollow,omitempty"`
	WARCFile    string    `json:"warc_file,omitempty"`
	WARCOffset  int64     `json:"warc_offset,omitempty"`
	// Robots is set on the line of a robots.txt request: what it made of
	// its host (rules, no-rules, disallow-all, redirect).
	Robots string `json:"robots,omitempty"`
}

// Log writes the fetch log. It is safe for concurrent use.
type Log struct {
	mu  sync.Mutex
	f   *os.File
	w   *bufio.Writer
	enc *json.Encoder
	err error
	// recent holds the last recentFetches records, a ring from next.
	recent []Record
	next   int
	// outcomes counts the records by outcome ("ok", "redirect",
	// "revisit", "not-modified", "error:timeout", ...).
	outcomes map[string]int64
	hosts    *recent.Hosts
}

// recentFetches is how many of the last fetches Recent returns.
const recentFetches = 100

// Open appends to the fetch log at path, created if need be.
func Open(path string) (*Log, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("fetchlog: %w", err)
	}
	w := bufio.NewWriterSize(f, 64<<10)
	return &Log{f: f, w: w, enc: json.NewEncoder(w), hosts: recent.NewHosts(recent.HostsConfig{})}, nil
}

// Write logs one fetch.
func (l *Log) Write(r Record) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err == nil {
		l.err = l.enc.Encode(r)
	}
	if l.outcomes == nil {
		l.outcomes = map[string]int64{}
	}
	l.outcomes[r.Outcome]++
	l.hosts.Fetched(r.Host, recent.Fetch{Time: r.Time, URL: r.URL, Status: r.Status, DurationMS: r.DurationMS, Outcome: r.Outcome, Error: r.Error})
	if len(l.recent) < recentFetches {
		l.recent = append(l.recent, r)
	} else {
		l.recent[l.next] = r
		l.next = (l.next + 1) % recentFetches
	}
}

// ByOutcome returns the fetches logged so far by outcome.
func (l *Log) ByOutcome() map[string]int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return maps.Clone(l.outcomes)
}

// Last returns the last fetches, newest first.
func (l *Log) Last() []Record {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]Record, 0, len(l.recent))
	for i := range l.recent {
		out = append(out, l.recent[(l.next+len(l.recent)-1-i)%len(l.recent)])
	}
	return out
}

// Close flushes the log to disk and closes it; the first write error
// there was is returned here.
func (l *Log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	err := errors.Join(l.err, l.w.Flush(), l.f.Sync(), l.f.Close())
	if err != nil {
		return fmt.Errorf("fetchlog: %s: %w", l.f.Name(), err)
	}
	return nil
}

// Hosts keeps the last fetches and parks of the hosts fetched most
// recently, for their pages in the operator API.
func (l *Log) Hosts() *recent.Hosts { return l.hosts }
