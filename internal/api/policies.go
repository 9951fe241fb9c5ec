package api

import (
	"errors"
	"net/http"

	"github.com/weft-crawler/weft/internal/policy"
)

// HostPolicy is the body of PUT and GET /v1/policies/{host}: an operator's
// override for one host, which may only tighten the crawl's politeness.
// It is the object a policy file gives each host, read and written by the
// policy package: "crawl_delay" (not shorter than the crawl's --delay; a
// longer robots.txt Crawl-delay still wins), "disallowed" (robots.txt path
// patterns, beside the host's robots.txt), "max_urls" (not above the
// crawl's cap), "render", and "boost" and "boosts" (factors on the rank
// of the host's URLs, or of those a path pattern matches: they change
// the order of its URLs, never how often it is asked). Its "headers",
// which the policy file and the profile give, are secrets: never shown
// here, and refused in a PUT (the crawl would have to keep them).
type HostPolicy = policy.Policy

func (s *Server) getPolicy(w http.ResponseWriter, r *http.Request) error {
	host, err := hostParam(r)
	if err != nil {
		return err
	}
	p, ok := s.res.Policies.Policy(host)
	if !ok {
		return &Error{Status: http.StatusNotFound, Code: "no_policy", Message: host + " has no policy"}
	}
	return writeJSON(w, http.StatusOK, p)
}

func (s *Server) putPolicy(w http.ResponseWriter, r *http.Request) error {
	host, err := hostParam(r)
	if err != nil {
		return err
	}
	var p HostPolicy
	if _, err := readJSON(r, "policy", &p); err != nil {
		return err
	}
	err = s.res.Policies.SetPolicy(host, p)
	switch {
	case errors.Is(err, ErrNotRunning):
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
	had, err := s.res.Policies.DeletePolicy(host)
	switch {
	case err != nil:
		return err
	case !had:
		return &Error{Status: http.StatusNotFound, Code: "no_policy", Message: host + " has no policy"}
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
