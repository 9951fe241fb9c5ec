package api

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	whatwgerrors "github.com/nlnwa/whatwg-url/errors"
	"golang.org/x/time/rate"

	"github.com/weft-crawler/weft/internal/canon"
	"github.com/weft-crawler/weft/internal/crawl"
	"github.com/weft-crawler/weft/internal/judge"
	"github.com/weft-crawler/weft/internal/scope"
)

// maxSeedsPerRequest bounds the URLs of one POST /v1/seeds.
const maxSeedsPerRequest = 1000

// SeedsRequest is the body of POST /v1/seeds.
type SeedsRequest struct {
	URLs []string `json:"urls"`
	// Priority is "high" or "normal" (the default).
	Priority string `json:"priority,omitempty"`
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
	// Code is the refusal itself, stable for programs: a finer one for
	// invalid and filter (urlErrorCode, filterCodes), else rejectCodes'.
	Code string `json:"code"`
	// Message says it for people.
	Message string `json:"message"`
}

// rejectCodes are the codes of the reasons that have no finer one, and
// their messages.
var rejectCodes = map[string][2]string{
	judge.Forbidden:   {"forbidden", "its address is one the SSRF guard refuses (loopback, private, link-local, metadata)"},
	judge.Filter:      {"filtered", "not fetched as a page (a /robots.txt is read for its host's rules only)"},
	judge.Scope:       {"scope", "refused by --exclude, or matched by no --include"},
	judge.Repeats:     {"repeats", "a path segment repeats too often: the mark of a crawler trap"},
	judge.Robots:      {"robots", "disallowed by its host's robots.txt"},
	judge.Unreachable: {"robots_unreachable", "its host's robots.txt could not be fetched (5xx, 429, a network or TLS error): the host is not crawled"},
	judge.Policy:      {"policy", "disallowed by the operator's policy for its host"},
	judge.Trap:        {"trap", "its host is cut off as a crawler trap (mostly near-duplicate pages)"},
	judge.HostCap:     {"host_cap", "its host has as many URLs as the crawl accepts (--max-urls-per-host, or its policy's max_urls)"},
	judge.Pattern:     {"pattern", "its host has as many URLs of this pattern as the crawl accepts"},
	judge.GaveUp:      {"gave_up", "its host was given up after too many failures"},
	judge.Seen:        {"seen", "already accepted"},
}

// rejection says why v's URL was refused.
func rejection(v crawl.Verdict) Rejected {
	r := Rejected{URL: v.URL, Reason: v.Reason}
	var ce *canon.Error
	var fe *scope.FilterError
	var se *crawl.SeedError
	switch {
	case errors.As(v.Err, &fe):
		r.Code, r.Message = filterCodes[fe.Cause], fe.Detail
		if r.Code == "" {
			r.Code = "filtered"
		}
	case errors.As(v.Err, &se):
		// The message names the URL and what a seed must be.
		r.Code, r.Message = "bad_url", se.Explain()
		if errors.Is(se, crawl.ErrNotHTTP) {
			r.Code = "bad_scheme"
		} else if errors.As(se, &ce) {
			r.Code = urlErrorCode(ce.Err)
		}
	case v.Reason == judge.Invalid:
		r.Code, r.Message = "bad_url", "not a URL"
	default:
		c, ok := rejectCodes[v.Reason]
		if !ok {
			c = [2]string{strings.ReplaceAll(v.Reason, "-", "_"), "refused: " + v.Reason}
		}
		r.Code, r.Message = c[0], c[1]
	}
	return r
}

// filterCodes are the codes of scope.FilterError's causes.
var filterCodes = map[string]string{
	scope.CauseScheme: "bad_scheme", scope.CauseTooLong: "too_long", scope.CauseParams: "too_many_params", scope.CauseExtension: "extension",
}

// urlErrorCode is the code of why the canonicaliser refused a URL.
func urlErrorCode(err error) string {
	switch {
	case errors.Is(err, canon.ErrEmpty):
		return "empty"
	case errors.Is(err, canon.ErrTooLong):
		return "too_long"
	case errors.Is(err, canon.ErrTooManySegments):
		return "too_many_segments"
	}
	switch whatwgerrors.Type(err) {
	case whatwgerrors.MissingSchemeNonRelativeURL:
		return "no_scheme"
	case whatwgerrors.PortOutOfRange, whatwgerrors.PortInvalid, whatwgerrors.PortMissing:
		return "bad_port"
	case whatwgerrors.HostMissing, whatwgerrors.DomainToASCII, whatwgerrors.DomainToUnicode, whatwgerrors.DomainInvalidCodePoint,
		whatwgerrors.HostInvalidCodePoint, whatwgerrors.IPv4EmptyPart, whatwgerrors.IPv4TooManyParts, whatwgerrors.IPv4NonNumericPart,
		whatwgerrors.IPv4NonDecimalPart, whatwgerrors.IPv4OutOfRangePart, whatwgerrors.IPv6Unclosed, whatwgerrors.IPv6InvalidCompression,
		whatwgerrors.IPv6TooManyPieces, whatwgerrors.IPv6MultipleCompression, whatwgerrors.IPv6InvalidCodePoint, whatwgerrors.IPv6TooFewPieces,
		whatwgerrors.IPv4InIPv6TooManyPieces, whatwgerrors.IPv4InIPv6InvalidCodePoint, whatwgerrors.IPv4InIPv6OutOfRangePart,
		whatwgerrors.IPv4InIPv6TooFewParts:
		return "bad_host"
	}
	return "bad_url"
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
	switch {
	case len(req.URLs) == 0:
		return &Error{Status: http.StatusBadRequest, Code: "bad_json", Message: `seeds request: "urls" is empty`}
	case len(req.URLs) > maxSeedsPerRequest:
		return &Error{Status: http.StatusBadRequest, Code: "too_many_urls", Message: fmt.Sprintf("seeds request: %d URLs, at most %d", len(req.URLs), maxSeedsPerRequest)}
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
	verdicts, err := s.crawl.AddSeeds(req.URLs, req.Priority == "high")
	if errors.Is(err, crawl.ErrNotRunning) {
		return nil, false, errNotRunning
	}
	if err != nil {
		return nil, false, err
	}
	resp := SeedsResponse{Accepted: []string{}, Rejected: []Rejected{}}
	for _, v := range verdicts {
		if v.Reason == "" {
			resp.Accepted = append(resp.Accepted, v.URL)
		} else {
			resp.Rejected = append(resp.Rejected, rejection(v))
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
