package api

import (
	"encoding/base64"
	"encoding/binary"
	"errors"
	"net/http"
	"strconv"
	"time"

	"weft/internal/crawl"
	"weft/internal/policy"
	"weft/internal/store"
)

// URLs is the body of GET /v1/urls: a page of URL records and the cursor
// of the next page ("" after the last).
type URLs struct {
	URLs       []URL  `json:"urls"`
	NextCursor string `json:"next_cursor"`
}

// URL is one URL record.
type URL struct {
	URL         string     `json:"url"`
	Host        string     `json:"host"`
	URLHash     string     `json:"url_hash"` // opaque: GET /v1/pages/{url_hash}
	Status      string     `json:"status"`
	Depth       int        `json:"depth"`
	LastStatus  int        `json:"last_status,omitempty"`
	LastOutcome string     `json:"last_outcome,omitempty"`
	LastFetch   *time.Time `json:"last_fetch,omitempty"`
	NextCrawl   *time.Time `json:"next_crawl,omitempty"`
	InLinks     int        `json:"in_links,omitempty"`
}

func optTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	t = t.UTC()
	return &t
}

var statuses = map[string]store.URLStatus{"": 0, "queued": store.URLQueued, "done": store.URLDone, "failed": store.URLFailed, "rejected": store.URLRejected}

// encodeCursor makes a position opaque: base64url of partition, hash and
// host.
func encodeCursor(p *store.URLPos) string {
	if p == nil {
		return ""
	}
	b := binary.BigEndian.AppendUint16(nil, p.Part)
	b = append(b, p.Hash[:]...)
	b = append(b, p.Host...)
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeCursor(s string) (*store.URLPos, error) {
	bad := &Error{Status: http.StatusBadRequest, Code: "bad_cursor", Message: "cursor " + strconv.Quote(s) + " is not one this server gave"}
	if s == "" {
		return nil, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) < 2+16+1 {
		return nil, bad
	}
	p := &store.URLPos{Part: binary.BigEndian.Uint16(b), Hash: [16]byte(b[2:18]), Host: string(b[18:])}
	for _, c := range b[18:] {
		if c == 0 {
			return nil, bad
		}
	}
	return p, nil
}

func (s *Server) urls(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	limit := 100
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 1000 {
			return &Error{Status: http.StatusBadRequest, Code: "bad_limit", Message: "limit " + strconv.Quote(v) + ": want 1 to 1000"}
		}
		limit = n
	}
	status, ok := statuses[q.Get("status")]
	if !ok {
		return &Error{Status: http.StatusBadRequest, Code: "bad_status", Message: "status " + strconv.Quote(q.Get("status")) + ": want queued, done, failed or rejected"}
	}
	after, err := decodeCursor(q.Get("cursor"))
	if err != nil {
		return err
	}
	host := q.Get("host")
	if host != "" {
		h, err := policy.NormalHost(host)
		if err != nil {
			return &Error{Status: http.StatusBadRequest, Code: "bad_host", Message: err.Error()}
		}
		host = h
	}
	pos, recs, next, err := s.crawl.URLs(host, status, after, limit)
	if errors.Is(err, crawl.ErrNotRunning) {
		return errNotRunning
	}
	if err != nil {
		return err
	}
	out := URLs{URLs: make([]URL, 0, len(recs)), NextCursor: encodeCursor(next)}
	for i, rec := range recs {
		out.URLs = append(out.URLs, URL{
			URL: rec.URL, Host: pos[i].Host, URLHash: encodeCursor(&pos[i]), Status: rec.Status.String(),
			Depth: rec.Depth, LastStatus: rec.LastStatus, LastOutcome: rec.LastOutcome,
			LastFetch: optTime(rec.LastFetch), NextCrawl: optTime(rec.NextCrawl), InLinks: rec.InLinks,
		})
	}
	return writeJSON(w, http.StatusOK, out)
}
