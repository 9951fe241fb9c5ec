package api

import (
	"errors"
	"net/http"

	"weft/internal/crawl"
	"weft/internal/policy"
)

// HostPolicy is the body of PUT and GET /v1/policies/{host}: an operator's
// override for one host, which may only tighten the crawl.
type HostPolicy struct {
	// CrawlDelay is the least gap between two requests ("5s", "1m"): not
	// shorter than the crawl's --delay; robots.txt's Crawl-delay still
	// wins when it is longer.
	CrawlDelay policy.Duration `json:"crawl_delay,omitzero"`
	// Disallowed are robots.txt path patterns not to fetch, beside the
	// host's robots.txt.
	Disallowed []string `json:"disallowed,omitempty"`
	// MaxURLs caps the URLs accepted for the host: not above the crawl's
	// cap.
	MaxURLs int64 `json:"max_urls,omitzero"`
}

func (s *Server) getPolicy(w http.ResponseWriter, r *http.Request) error {
	host, err := hostParam(r)
	if err != nil {
		return err
	}
	p, ok := s.crawl.Policy(host)
	if !ok {
		return &Error{Status: http.StatusNotFound, Code: "no_policy", Message: host + " has no policy"}
	}
	return writeJSON(w, http.StatusOK, HostPolicy{CrawlDelay: p.Delay, Disallowed: p.Disallow, MaxURLs: p.MaxURLs})
}

func (s *Server) putPolicy(w http.ResponseWriter, r *http.Request) error {
	host, err := hostParam(r)
	if err != nil {
		return err
	}
	var hp HostPolicy
	if _, err := readJSON(r, "policy", &hp); err != nil {
		return err
	}
	err = s.crawl.SetPolicy(host, policy.Policy{Delay: hp.CrawlDelay, Disallow: hp.Disallowed, MaxURLs: hp.MaxURLs})
	switch {
	case errors.Is(err, crawl.ErrNotRunning):
		return errNotRunning
	case err != nil:
		return &Error{Status: http.StatusUnprocessableEntity, Code: "policy_refused", Message: err.Error()}
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) deletePolicy(w http.ResponseWriter, r *http.Request) error {
	host, err := hostParam(r)
	if err != nil {
		return err
	}
	had, err := s.crawl.DeletePolicy(host)
	switch {
	case errors.Is(err, crawl.ErrNotRunning):
		return errNotRunning
	case err != nil:
		return err
	case !had:
		return &Error{Status: http.StatusNotFound, Code: "no_policy", Message: host + " has no policy"}
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
