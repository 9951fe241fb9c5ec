package api

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// maxSeedsPerRequest bounds the URLs of one POST /v1/seeds.
const maxSeedsPerRequest = 1000

// SeedsRequest is the body of POST /v1/seeds.
type SeedsRequest struct {
	// URLs are seeds with the crawl's limits; Seeds are seeds with
	// limits of their own. Either may be empty, not both.
	URLs  []string   `json:"urls"`
	Seeds []SeedSpec `json:"seeds,omitempty"`
	// Priority is "high" or "normal" (the default).
	Priority string `json:"priority,omitempty"`
}

// SeedOptions are a seed's own limits; a zero field means the crawl's.
type SeedOptions struct {
	// Scope is domain, host, prefix or any.
	Scope string `json:"scope,omitempty"`
	// MaxDepth is the most link hops from the seed (negative: no limit).
	MaxDepth int `json:"max_depth,omitempty"`
	// MaxPages is the seed's page budget.
	MaxPages int64 `json:"max_pages,omitempty"`
	// Include and Exclude are RE2 expressions on the canonical URL that
	// replace the crawl's for the seed.
	Include []string `json:"include,omitempty"`
	Exclude []string `json:"exclude,omitempty"`
}

// SeedSpec is a seed with its own limits.
type SeedSpec struct {
	URL string `json:"url"`
	SeedOptions
}

// SeedStatus is one seed's state (running, done, limit or failing; see
// package seeds for the rule) and what was fetched under it.
type SeedStatus struct {
	URL     string      `json:"url"`
	ID      uint32      `json:"id"`
	State   string      `json:"state"`
	Options SeedOptions `json:"options"`
	Pages   int64       `json:"pages"`
	Bytes   int64       `json:"bytes"`
	Errors  int64       `json:"errors"`
	Dropped int64       `json:"dropped"` // pages past its budget, not fetched
}

// SeedList is the body of GET /v1/seeds: a page of the seeds, and the
// totals of all of them.
type SeedList struct {
	Seeds  []SeedStatus `json:"seeds"`
	Total  int          `json:"total"`          // seeds in all
	Next   int          `json:"next,omitempty"` // the offset of the next page; absent on the last
	Totals SeedTotals   `json:"totals"`
}

// SeedTotals sums every seed's counts and states.
type SeedTotals struct {
	Running int   `json:"running"`
	Done    int   `json:"done"`
	Limit   int   `json:"limit"`
	Failing int   `json:"failing"`
	Pages   int64 `json:"pages"`
	Bytes   int64 `json:"bytes"`
	Errors  int64 `json:"errors"`
	Dropped int64 `json:"dropped"`
}

// maxSeedList bounds the seeds of one page of GET /v1/seeds.
const maxSeedList = 1000

func (s *Server) seedList(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	offset, limit := 0, 100
	if v := q.Get("offset"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return &Error{Status: http.StatusBadRequest, Code: "bad_offset", Message: "offset " + strconv.Quote(v) + ": want 0 or more"}
		}
		offset = n
	}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxSeedList {
			return &Error{Status: http.StatusBadRequest, Code: "bad_limit", Message: fmt.Sprintf("limit %q: want 1 to %d", v, maxSeedList)}
		}
		limit = n
	}
	l := s.res.Seeds.SeedList(offset, limit)
	if l.Seeds == nil {
		l.Seeds = []SeedStatus{}
	}
	return writeJSON(w, http.StatusOK, l)
}

// SeedsResponse is what POST /v1/seeds answers, 202 Accepted: the URLs
// queued (canonical), and those refused with the reason.
type SeedsResponse struct {
	Accepted []string   `json:"accepted"`
	Rejected []Rejected `json:"rejected"`
}

// Rejected is a URL refused and why.
type Rejected struct {
	URL string `json:"url"`
	// Reason is the class of the refusal, as weft_rejected_urls_total
	// counts it: invalid, forbidden (the SSRF guard), filter, scope,
	// repeats, robots, robots-unreachable, policy, trap, host-cap, seen.
	Reason string `json:"reason"`
	// Code is the refusal itself, stable for programs: one per reason,
	// and finer ones for invalid and filter (why the URL does not parse,
	// which filter refused it).
	Code string `json:"code"`
	// Message says it for people.
	Message string `json:"message"`
}

// idempotency remembers the answers to POST /v1/seeds by Idempotency-Key,
// for a day and at most maxKeys of them, so that a client retrying a
// request it is unsure of adds its seeds once.
type idempotency struct {
	mu    sync.Mutex // held while the crawl takes seeds: the same key twice at once is answered once
	keys  map[string]idemEntry
	order []string // keys, oldest first
	bytes int      // of the answers kept
}

type idemEntry struct {
	body   [sha256.Size]byte // the request it answered
	answer []byte
	at     time.Time
}

const (
	idemTTL      = 24 * time.Hour
	idemMaxKeys  = 10000
	idemMaxBytes = 64 << 20
)

// limiters holds a token bucket per client address for POST /v1/seeds.
type limiters struct {
	mu    sync.Mutex
	perIP map[string]*rate.Limiter
	rate  rate.Limit
	burst int
}

func (l *limiters) allow(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.perIP == nil {
		l.perIP = map[string]*rate.Limiter{}
	}
	lim, ok := l.perIP[host]
	if !ok {
		if len(l.perIP) >= 10000 { // bounded: forget everyone, the rare reset is harmless
			clear(l.perIP)
		}
		lim = rate.NewLimiter(l.rate, l.burst)
		l.perIP[host] = lim
	}
	return lim.Allow()
}

func (s *Server) addSeeds(w http.ResponseWriter, r *http.Request) error {
	if !s.seedLimit.allow(r.RemoteAddr) {
		w.Header().Set("Retry-After", strconv.Itoa(int(max(1, 1/float64(s.seedLimit.rate)))))
		return &Error{Status: http.StatusTooManyRequests, Code: "rate_limited", Message: "too many seed requests from this client; retry later"}
	}
	var req SeedsRequest
	body, err := readJSON(r, "seeds request", &req)
	if err != nil {
		return err
	}
	switch n := len(req.URLs) + len(req.Seeds); {
	case n == 0:
		return &Error{Status: http.StatusBadRequest, Code: "bad_json", Message: `seeds request: "urls" and "seeds" are empty`}
	case n > maxSeedsPerRequest:
		return &Error{Status: http.StatusBadRequest, Code: "too_many_urls", Message: fmt.Sprintf("seeds request: %d URLs, at most %d", n, maxSeedsPerRequest)}
	case req.Priority != "" && req.Priority != "high" && req.Priority != "normal":
		return &Error{Status: http.StatusBadRequest, Code: "bad_json", Message: fmt.Sprintf(`seeds request: priority %q: want "high" or "normal"`, req.Priority)}
	}
	key := r.Header.Get("Idempotency-Key")
	if len(key) > 255 {
		return &Error{Status: http.StatusBadRequest, Code: "bad_idempotency_key", Message: "Idempotency-Key over 255 bytes"}
	}
	answer, replayed, err := s.seedsAnswer(key, sha256.Sum256(body), req)
	if err != nil {
		return err
	}
	if replayed {
		w.Header().Set("Idempotent-Replayed", "true")
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusAccepted)
	_, err = w.Write(answer)
	return err
}

// seedsAnswer adds the seeds, or replays the answer to an earlier request
// with the same key. The lock is held while the crawl takes the seeds, so
// the same key twice at once adds once, never while an answer is written.
func (s *Server) seedsAnswer(key string, sum [sha256.Size]byte, req SeedsRequest) (answer []byte, replayed bool, err error) {
	s.idem.mu.Lock()
	defer s.idem.mu.Unlock()
	now := time.Now()
	if key != "" {
		if e, ok := s.idem.keys[key]; ok && now.Sub(e.at) < idemTTL {
			if e.body != sum {
				return nil, false, &Error{Status: http.StatusUnprocessableEntity, Code: "idempotency_key_reused", Message: "Idempotency-Key " + strconv.Quote(key) + " was used with another request"}
			}
			return e.answer, true, nil
		}
	}
	urls := slices.Clip(req.URLs)
	var opts []SeedOptions
	if len(req.Seeds) > 0 {
		opts = make([]SeedOptions, len(req.URLs), len(req.URLs)+len(req.Seeds))
		for _, sp := range req.Seeds {
			urls = append(urls, sp.URL)
			opts = append(opts, sp.SeedOptions)
		}
	}
	verdicts, err := s.res.Seeds.AddSeeds(urls, opts, req.Priority == "high")
	if err != nil {
		return nil, false, err
	}
	resp := SeedsResponse{Accepted: []string{}, Rejected: []Rejected{}}
	for _, v := range verdicts {
		if v.Reason == "" {
			resp.Accepted = append(resp.Accepted, v.URL)
		} else {
			resp.Rejected = append(resp.Rejected, Rejected{URL: v.URL, Reason: v.Reason, Code: v.Code, Message: v.Message})
		}
	}
	answer, err = json.MarshalIndent(resp, "", "  ")
	if err != nil {
		return nil, false, err
	}
	answer = append(answer, '\n')
	if key != "" {
		s.idem.remember(key, idemEntry{body: sum, answer: answer, at: now})
	}
	s.cfg.Logger.Info("seeds added through the API", "accepted", len(resp.Accepted), "rejected", len(resp.Rejected))
	return answer, false, nil
}

// remember keeps an answer under key, forgetting the oldest past
// idemMaxKeys answers or idemMaxBytes of them, and those past idemTTL;
// idem.mu is held.
func (m *idempotency) remember(key string, e idemEntry) {
	if m.keys == nil {
		m.keys = map[string]idemEntry{}
	}
	if old, ok := m.keys[key]; ok { // expired, and used again
		m.bytes -= len(old.answer)
	}
	m.keys[key] = e
	m.order = append(m.order, key)
	m.bytes += len(e.answer)
	for len(m.order) > 0 {
		old, ok := m.keys[m.order[0]]
		if ok && len(m.keys) <= idemMaxKeys && m.bytes <= idemMaxBytes && e.at.Sub(old.at) < idemTTL {
			break
		}
		if ok {
			m.bytes -= len(old.answer)
			delete(m.keys, m.order[0])
		}
		m.order = m.order[1:]
	}
}
