package api

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/weft-crawler/weft/internal/policy"
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
	// Rank is the rank it was queued with when it was admitted, or that
	// of its lease last done: within its host, the highest goes first
	// (docs/design.md, "What is fetched first").
	Rank     uint32   `json:"rank"`
	Estimate Estimate `json:"estimate"`
}

// Estimate is the rank a URL would be queued with now, and why: the cash
// its in-links gave it so far (OPIC), a prior for its depth and one for
// what a sitemap said of it, and the operator's boost for it (its host's
// times its pattern's), which multiplies their sum.
type Estimate struct {
	Rank         uint32  `json:"rank"`
	InLinkCash   uint32  `json:"in_link_cash"`
	DepthPrior   uint32  `json:"depth_prior"`
	SitemapPrior uint32  `json:"sitemap_prior"`
	Boost        float64 `json:"boost"`
}

func optTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	t = t.UTC()
	return &t
}

// statuses are the statuses GET /v1/urls filters by; "" is every one.
var statuses = []string{"", "queued", "done", "failed", "rejected"}

// encodePos makes a position opaque, a URL's url_hash: base64url of
// partition, hash and host. It names the URL whatever the process, so it
// is not signed: one made up finds a URL or none.
func encodePos(p *URLPos) string {
	if p == nil {
		return ""
	}
	return base64.RawURLEncoding.EncodeToString(appendPos(nil, p))
}

func appendPos(b []byte, p *URLPos) []byte {
	b = binary.BigEndian.AppendUint16(b, p.Part)
	b = append(b, p.Hash[:]...)
	return append(b, p.Host...)
}

func decodePos(s string) (*URLPos, bool) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return nil, false
	}
	return posOf(b)
}

func posOf(b []byte) (*URLPos, bool) {
	if len(b) < 2+16+1 || bytes.IndexByte(b[18:], 0) >= 0 {
		return nil, false
	}
	return &URLPos{Part: binary.BigEndian.Uint16(b), Hash: [16]byte(b[2:18]), Host: string(b[18:])}, true
}

// cursorMACSize is how much of the HMAC-SHA256 a cursor carries.
const cursorMACSize = 16

// cursor is the next_cursor of a page of GET /v1/urls: the position signed
// with this process's key, bound to the query's filters, so that the
// server serves only positions it gave, for the listing it gave them in.
func (s *Server) cursor(p *URLPos, host, status string) string {
	if p == nil {
		return ""
	}
	b := appendPos(nil, p)
	return base64.RawURLEncoding.EncodeToString(append(b, s.cursorMAC(b, host, status)...))
}

func (s *Server) cursorMAC(pos []byte, host, status string) []byte {
	m := hmac.New(sha256.New, s.cursorKey[:])
	// Lengths first: no two (host, status, position) write the same bytes.
	m.Write(binary.BigEndian.AppendUint32(nil, uint32(len(host))))
	m.Write([]byte(host))
	m.Write(binary.BigEndian.AppendUint32(nil, uint32(len(status))))
	m.Write([]byte(status))
	m.Write(pos)
	return m.Sum(nil)[:cursorMACSize]
}

// openCursor returns the position a cursor stands for; nil for "".
func (s *Server) openCursor(c, host, status string) (*URLPos, error) {
	if c == "" {
		return nil, nil
	}
	quoted := strconv.Quote(c)
	if len(quoted) > 80 {
		quoted = quoted[:76] + `..."`
	}
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil || len(b) < cursorMACSize {
		return nil, &Error{Status: http.StatusBadRequest, Code: "bad_cursor", Message: "cursor " + quoted + " is not one this server gave: pass a next_cursor as it came"}
	}
	pos, mac := b[:len(b)-cursorMACSize], b[len(b)-cursorMACSize:]
	p, ok := posOf(pos)
	if !ok || !hmac.Equal(mac, s.cursorMAC(pos, host, status)) {
		return nil, &Error{Status: http.StatusBadRequest, Code: "bad_cursor", Message: "cursor " + quoted +
			" is not one this server process gave for this host and status: cursors are signed with a key made at each start, so one from before a restart is refused too; list again without a cursor"}
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
	status := q.Get("status")
	if !slices.Contains(statuses, status) {
		return &Error{Status: http.StatusBadRequest, Code: "bad_status", Message: "status " + strconv.Quote(q.Get("status")) + ": want queued, done, failed or rejected"}
	}
	host := q.Get("host")
	if host != "" {
		h, err := policy.NormalHost(host)
		if err != nil {
			return &Error{Status: http.StatusBadRequest, Code: "bad_host", Message: err.Error()}
		}
		host = h
	}
	after, err := s.openCursor(q.Get("cursor"), host, status)
	if err != nil {
		return err
	}
	recs, next, err := s.res.URLs.URLs(host, status, after, limit)
	if err != nil {
		return err
	}
	out := URLs{URLs: make([]URL, 0, len(recs)), NextCursor: s.cursor(next, host, status)}
	for _, rec := range recs {
		out.URLs = append(out.URLs, URL{
			URL: rec.URL, Host: rec.Pos.Host, URLHash: encodePos(&rec.Pos), Status: rec.Status,
			Depth: rec.Depth, LastStatus: rec.LastStatus, LastOutcome: rec.LastOutcome,
			LastFetch: optTime(rec.LastFetch), NextCrawl: optTime(rec.NextCrawl), InLinks: rec.InLinks, Rank: rec.Rank, Estimate: rec.Estimate,
		})
	}
	return writeJSON(w, http.StatusOK, out)
}
