package api

import (
	"errors"
	"fmt"
	"net/http"
	"time"
)

// LeaseRequest is the body of POST /v1/frontier/lease.
type LeaseRequest struct {
	WorkerID string `json:"worker_id"`
	// MaxURLs is how many URLs to lease at most (1 to 100; 1 if zero).
	MaxURLs int `json:"max_urls,omitempty"`
	// WaitMS is how long to wait for the first, in milliseconds (at most
	// 10,000; 1,000 if zero).
	WaitMS int `json:"wait_ms,omitempty"`
}

// LeaseResponse is what POST /v1/frontier/lease answers: the URLs leased,
// none if none was ready in time.
type LeaseResponse struct {
	URLs []LeasedURL `json:"urls"`
}

// LeasedURL is one URL leased: fetch it, then complete the lease before it
// expires, or it (and its host) go back to the frontier.
type LeasedURL struct {
	LeaseID        string    `json:"lease_id"`
	URL            string    `json:"url"`
	Host           string    `json:"host"`
	Depth          int       `json:"depth"`
	LeaseExpiresAt time.Time `json:"lease_expires_at"`
}

// CompleteRequest is the body of POST /v1/frontier/complete.
type CompleteRequest struct {
	LeaseID string `json:"lease_id"`
	URL     string `json:"url"`
	// StatusCode is the response's HTTP status; 0 when the request got no
	// response.
	StatusCode  int       `json:"status_code"`
	FetchedAt   time.Time `json:"fetched_at"`
	ContentHash string    `json:"content_hash,omitempty"`
}

func (s *Server) lease(w http.ResponseWriter, r *http.Request) error {
	var req LeaseRequest
	if _, err := readJSON(r, "lease request", &req); err != nil {
		return err
	}
	switch {
	case req.MaxURLs == 0:
		req.MaxURLs = 1
	case req.MaxURLs < 0 || req.MaxURLs > 100:
		return &Error{Status: http.StatusBadRequest, Code: "bad_json", Message: fmt.Sprintf("lease request: max_urls %d: want 1 to 100", req.MaxURLs)}
	}
	switch {
	case req.WaitMS == 0:
		req.WaitMS = 1000
	case req.WaitMS < 0 || req.WaitMS > 10000:
		return &Error{Status: http.StatusBadRequest, Code: "bad_json", Message: fmt.Sprintf("lease request: wait_ms %d: want 1 to 10000", req.WaitMS)}
	}
	leases, err := s.res.Frontier.Lease(r.Context(), req.MaxURLs, s.cfg.LeaseTTL, time.Duration(req.WaitMS)*time.Millisecond)
	if err != nil {
		return err
	}
	out := LeaseResponse{URLs: make([]LeasedURL, 0, len(leases))}
	for _, l := range leases {
		out.URLs = append(out.URLs, LeasedURL{LeaseID: l.ID, URL: l.URL, Host: l.Host, Depth: l.Depth, LeaseExpiresAt: l.Expires.UTC()})
	}
	if len(leases) > 0 {
		s.cfg.Logger.Debug("URLs leased to an external fetcher", "worker", req.WorkerID, "urls", len(leases))
	}
	return writeJSON(w, http.StatusOK, out)
}

func (s *Server) complete(w http.ResponseWriter, r *http.Request) error {
	var req CompleteRequest
	if _, err := readJSON(r, "complete request", &req); err != nil {
		return err
	}
	if req.LeaseID == "" || req.URL == "" || req.StatusCode < 0 || req.StatusCode > 999 {
		return &Error{Status: http.StatusBadRequest, Code: "bad_json", Message: "complete request: lease_id and url are required, status_code 0 (no response) or an HTTP status"}
	}
	if req.FetchedAt.IsZero() {
		req.FetchedAt = time.Now()
	}
	err := s.res.Frontier.Complete(req.LeaseID, req.URL, req.StatusCode, req.FetchedAt, req.ContentHash)
	switch {
	case errors.Is(err, ErrUnknownLease):
		return &Error{Status: http.StatusNotFound, Code: "unknown_lease", Message: "no lease " + req.LeaseID + " out on " + req.URL + ": never given, expired, or for another URL"}
	case err != nil:
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
