// Package fetchlog is the crawl's fetch log, fetches.jsonl: a line for
// every fetch attempt, the last of them kept for the operator API, and
// counts by outcome. It can write the same records as Heritrix's
// crawl.log too (CrawlLog).
package fetchlog

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/weft-crawler/weft/internal/crawllog"
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
	NearDupOf   string    `json:"near_dup_of,omitempty"`
	Truncated   string    `json:"truncated,omitempty"`
	Links       int       `json:"links,omitempty"`
	NoIndex     bool      `json:"noindex,omitempty"`
	NoFollow    bool      `json:"nofollow,omitempty"`
	Search      bool      `json:"search,omitempty"` // a search's results (content.Result.Search)
	WARCFile    string    `json:"warc_file,omitempty"`
	WARCOffset  int64     `json:"warc_offset,omitempty"`
	// Robots is set on the line of a robots.txt request: what it made of
	// its host (rules, no-rules, disallow-all, redirect).
	Robots string `json:"robots,omitempty"`
	// Path is how the URL was found from its seed, as Heritrix's
	// discovery path writes it ("LLE"; "" for a seed); a robots.txt's is
	// the path of the URL that needed it, and P.
	Path string `json:"path,omitempty"`
	// Worker is the number of the worker that made the request.
	Worker int `json:"worker,omitempty"`
	// SHA1 is the payload's digest as its WARC record has it
	// ("sha1:BASE32"): the one digest of a body weft computes for its
	// own fetches.
	SHA1 string `json:"sha1,omitempty"`
	// ContentHash is, for a fetch made outside weft (outcome
	// "external"), the hash of the content its fetcher reported, as it
	// reported it.
	ContentHash string `json:"content_hash,omitempty"`
	// RevisitOf is, for an answer archived as a revisit record, the URL
	// of the capture it refers to.
	RevisitOf string `json:"revisit_of,omitempty"`
	// Unsent says a failed request never reached the server (the
	// failure came before a connection: DNS, the address guard,
	// connecting, TLS).
	Unsent bool `json:"unsent,omitempty"`
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
	// crawl is the crawl.log the records go to as well, nil for none.
	crawl     *os.File
	crawlW    *bufio.Writer
	crawlLine []byte
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

// CrawlLog makes the log write every record to path too, appended, in
// Heritrix's crawl.log format (CrawlLine), but for those of URLs that
// were not requested (Outcome "deferred": left queued at the end).
func (l *Log) CrawlLog(path string) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("fetchlog: crawl log: %w", err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.crawl, l.crawlW = f, bufio.NewWriterSize(f, 64<<10)
	return nil
}

// Precluded writes the crawl log's line of a URL dropped unrequested
// with status, one of Heritrix's codes for a fetch its rules precluded
// (crawllog.RobotsPrecluded, ...), as Heritrix logs them; it is no
// fetch, so fetches.jsonl and the counts do not have it.
func (l *Log) Precluded(r Record, status int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.crawlW == nil || l.err != nil {
		return
	}
	line := CrawlLine(&r, time.Now())
	line.Status, line.Start = status, time.Time{}
	l.crawlLine = crawllog.Append(l.crawlLine[:0], &line)
	_, l.err = l.crawlW.Write(l.crawlLine)
}

// Write logs one fetch.
func (l *Log) Write(r Record) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err == nil {
		l.err = l.enc.Encode(r)
	}
	if l.crawlW != nil && l.err == nil && r.Outcome != OutcomeDeferred {
		line := CrawlLine(&r, time.Now())
		l.crawlLine = crawllog.Append(l.crawlLine[:0], &line)
		_, l.err = l.crawlW.Write(l.crawlLine)
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
	if l.crawl != nil {
		err = errors.Join(err, l.crawlW.Flush(), l.crawl.Sync(), l.crawl.Close())
	}
	if err != nil {
		return fmt.Errorf("fetchlog: %s: %w", l.f.Name(), err)
	}
	return nil
}

// OutcomeDeferred is the outcome of a URL left queued when the crawl
// ended: a line that says so, for no request.
const OutcomeDeferred = "deferred"

// CrawlLine is r as a line of Heritrix's crawl.log, logged at now. A
// failure without an answer gets the code Heritrix gives it (ErrorStatus);
// an answer archived as a revisit is annotated as Heritrix annotates
// its duplicates, and a body cut short as Heritrix annotates a
// truncated one.
func CrawlLine(r *Record, now time.Time) crawllog.Line {
	l := crawllog.Line{Logged: now, Status: r.Status, Size: int64(r.Bytes), URI: r.URL, Path: r.Path, Via: r.Via,
		MediaType: r.ContentType, Worker: r.Worker, Start: r.Time, Duration: time.Duration(r.DurationMS) * time.Millisecond, Digest: r.SHA1}
	switch {
	case r.Status == 0:
		l.Status, l.Size = ErrorStatus(r.Outcome, r.Unsent), -1
	case strings.HasSuffix(r.Outcome, "external"):
		l.Size = -1 // an external fetcher reports no size
	}
	switch {
	case r.RevisitOf == "":
	case r.Status == 304:
		l.Annotations = append(l.Annotations, "duplicate:server-not-modified")
	case r.RevisitOf == r.URL:
		l.Annotations = append(l.Annotations, "duplicate:digest")
	default:
		l.Annotations = append(l.Annotations, "duplicate:uriAgnosticDigest")
	}
	switch r.Truncated {
	case "":
	case "length":
		l.Annotations = append(l.Annotations, "lenTrunc")
	case "time":
		l.Annotations = append(l.Annotations, "timeTrunc")
	default:
		l.Annotations = append(l.Annotations, "truncated:"+r.Truncated)
	}
	return l
}

// ErrorStatus is Heritrix's status code for a fetch of the outcome given
// ("error:" and a fetch.Kind's name) that got no answer; unsent says
// the request never reached the server.
func ErrorStatus(outcome string, unsent bool) int {
	switch strings.TrimPrefix(outcome, "error:") {
	case "dns":
		// The page's own line: Heritrix gives -1 to the dns: lookup and
		// -6 to the URL it was a prerequisite of.
		return crawllog.DomainPrereqFailed
	case "connect":
		if unsent {
			return crawllog.ConnectFailed
		}
		return crawllog.ConnectLost // closed or reset with the request sent
	case "tls":
		return crawllog.ConnectFailed
	case "timeout":
		return crawllog.Timeout
	case "protocol":
		return crawllog.ConnectLost // the exchange broke: no HTTP answer came
	case "refused":
		return crawllog.BlockedByUser // the address guard the operator set
	case "bad_url":
		return crawllog.Unfetchable
	}
	return crawllog.RuntimeException
}

type workerKey struct{}

// WithWorker returns ctx carrying the number of the worker whose lease
// it is under, for the log lines of the requests made under it.
func WithWorker(ctx context.Context, n int) context.Context {
	return context.WithValue(ctx, workerKey{}, n)
}

// WorkerOf returns the number WithWorker put in ctx, 0 if none.
func WorkerOf(ctx context.Context) int {
	n, _ := ctx.Value(workerKey{}).(int)
	return n
}

// Hosts keeps the last fetches and parks of the hosts fetched most
// recently, for their pages in the operator API.
func (l *Log) Hosts() *recent.Hosts { return l.hosts }
