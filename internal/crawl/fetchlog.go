package crawl

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
	"github.com/weft-crawler/weft/internal/robotstxt"
)

// fetchRecord is one line of fetches.jsonl, one per fetch attempt: the
// URL asked, what came back (status, outcome, bytes, type, digest) and
// how long it took.
type fetchRecord struct {
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

type fetchLog struct {
	mu  sync.Mutex
	f   *os.File
	w   *bufio.Writer
	enc *json.Encoder
	err error
	// recent holds the last recentFetches records, a ring from next.
	recent []fetchRecord
	next   int
	// outcomes counts the records by outcome ("ok", "redirect",
	// "revisit", "not-modified", "error:timeout", ...).
	outcomes map[string]int64
	// hosts keeps the last fetches and parks of the hosts fetched most
	// recently, for their pages in the operator API.
	hosts *recent.Hosts
}

// recentFetches is how many of the last fetches Recent returns.
const recentFetches = 100

func openFetchLog(path string) (*fetchLog, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("crawl: fetch log: %w", err)
	}
	w := bufio.NewWriterSize(f, 64<<10)
	return &fetchLog{f: f, w: w, enc: json.NewEncoder(w), hosts: recent.NewHosts(recent.HostsConfig{})}, nil
}

func (l *fetchLog) write(r fetchRecord) {
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

// Robots writes the line of a robots.txt request (robotstxt.FetchLog).
func (l *fetchLog) Robots(r robotstxt.Line) {
	l.write(fetchRecord{Time: r.Time, URL: r.URL, Host: r.Host, Status: r.Status, Bytes: r.Bytes, DurationMS: r.DurationMS,
		Outcome: r.Outcome, Error: r.Error, Location: r.Location, ContentType: r.ContentType, Truncated: r.Truncated, Robots: r.Robots})
}

// byOutcome returns the fetches logged so far by outcome.
func (l *fetchLog) byOutcome() map[string]int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return maps.Clone(l.outcomes)
}

// last returns the last fetches, newest first.
func (l *fetchLog) last() []fetchRecord {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]fetchRecord, 0, len(l.recent))
	for i := range l.recent {
		out = append(out, l.recent[(l.next+len(l.recent)-1-i)%len(l.recent)])
	}
	return out
}

func (l *fetchLog) close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	err := errors.Join(l.err, l.w.Flush(), l.f.Sync(), l.f.Close())
	if err != nil {
		return fmt.Errorf("crawl: fetch log %s: %w", l.f.Name(), err)
	}
	return nil
}
