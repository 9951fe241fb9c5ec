package api

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/weft-crawler/weft/internal/crawl"
)

// Host is the body of GET /v1/hosts/{host}.
type Host struct {
	Host           string      `json:"host"`
	Held           bool        `json:"held"`
	Busy           bool        `json:"busy"`
	Parked         bool        `json:"parked"`
	Draining       bool        `json:"draining"`
	QueuedInMemory int         `json:"queued_in_memory"`
	MoreOnDisk     bool        `json:"more_on_disk"`
	NextAllowed    *time.Time  `json:"next_allowed"`
	GapSeconds     float64     `json:"gap_seconds"`
	CrawlDelay     float64     `json:"crawl_delay_seconds"`
	BackoffSeconds float64     `json:"backoff_seconds"`
	ErrorStreak    int         `json:"error_streak"`
	Errors         int         `json:"errors"`
	Parks          int         `json:"parks"`
	GaveUp         bool        `json:"gave_up"`
	Robots         *HostRobots `json:"robots"`
	URLsAccepted   int64       `json:"urls_accepted"`
}

// HostRobots is the robots.txt answer a host's URLs are judged by.
type HostRobots struct {
	Outcome   string    `json:"outcome"`
	Status    int       `json:"status"`
	FetchedAt time.Time `json:"fetched_at"`
}

func hostOf(st crawl.HostStatus) Host {
	f, cl := st.Frontier, st.Frontier.Clock
	h := Host{
		Host: st.Host, Held: f.Held, Busy: f.Busy, Parked: f.Parked, Draining: f.Draining,
		QueuedInMemory: f.Queued, MoreOnDisk: f.MoreOnDisk, GapSeconds: st.Gap.Seconds(),
		CrawlDelay: cl.CrawlDelay.Seconds(), BackoffSeconds: cl.Backoff.Seconds(),
		ErrorStreak: cl.Streak, Errors: cl.Errors, Parks: cl.Parks, GaveUp: cl.GaveUp, URLsAccepted: st.Accepted,
	}
	if !cl.NextAt.IsZero() {
		t := cl.NextAt.UTC()
		h.NextAllowed = &t
	}
	if r := st.Robots; r != nil {
		h.Robots = &HostRobots{Outcome: r.Outcome.String(), Status: r.Status, FetchedAt: r.FetchedAt.UTC()}
	}
	return h
}

// hostParam is the {host} of a path: an authority as URLs are queued
// under (host[:port], lowercase).
func hostParam(r *http.Request) (string, error) {
	h := strings.ToLower(r.PathValue("host"))
	if h == "" || strings.ContainsAny(h, "/ \x00") {
		return "", &Error{Status: http.StatusBadRequest, Code: "bad_host", Message: "not a host: " + r.PathValue("host")}
	}
	return h, nil
}

func (s *Server) host(w http.ResponseWriter, r *http.Request) error {
	name, err := hostParam(r)
	if err != nil {
		return err
	}
	st := s.crawl.Host(name)
	if !st.Known && !st.Frontier.Held {
		return &Error{Status: http.StatusNotFound, Code: "unknown_host", Message: "the crawl knows nothing of " + name}
	}
	return writeJSON(w, http.StatusOK, hostOf(st))
}

// holdHost is the handler that holds a host (on) or releases it.
func holdHost(on bool) func(*Server, http.ResponseWriter, *http.Request) error {
	return func(s *Server, w http.ResponseWriter, r *http.Request) error {
		name, err := hostParam(r)
		if err != nil {
			return err
		}
		name, err = s.crawl.HoldHost(name, on)
		if err != nil {
			return &Error{Status: http.StatusBadRequest, Code: "bad_host", Message: err.Error()}
		}
		s.cfg.Logger.Info("host held through the API", "host", name, "held", on)
		return writeJSON(w, http.StatusOK, map[string]any{"host": name, "held": on})
	}
}

// HostList is the body of GET /v1/hosts.
type HostList struct {
	Hosts []Host `json:"hosts"`
}

func (s *Server) hosts(w http.ResponseWriter, r *http.Request) error {
	limit := 200
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 10000 {
			return &Error{Status: http.StatusBadRequest, Code: "bad_limit", Message: "limit " + strconv.Quote(v) + ": want 1 to 10000"}
		}
		limit = n
	}
	out := HostList{Hosts: []Host{}}
	for _, st := range s.crawl.Hosts(limit) {
		out.Hosts = append(out.Hosts, hostOf(st))
	}
	return writeJSON(w, http.StatusOK, out)
}

// Fetches is the body of GET /v1/fetches: the last fetches, newest first,
// as lines of the fetch log.
type Fetches struct {
	Fetches []crawl.Fetch `json:"fetches"`
}

func (s *Server) fetches(w http.ResponseWriter, _ *http.Request) error {
	f := s.crawl.Recent()
	if f == nil {
		f = []crawl.Fetch{}
	}
	return writeJSON(w, http.StatusOK, Fetches{Fetches: f})
}
