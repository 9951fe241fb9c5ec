package api

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/weft-crawler/weft/internal/frontier"
	"github.com/weft-crawler/weft/internal/history"
	"github.com/weft-crawler/weft/internal/policy"
	"github.com/weft-crawler/weft/internal/robots"
)

// Host is the body of GET /v1/hosts/{host}, and one of GET /v1/hosts.
type Host struct {
	Host string `json:"host"`
	// State is what the host is doing now, one of HostStates.
	State          string     `json:"state"`
	Held           bool       `json:"held"`
	Busy           bool       `json:"busy"`
	Parked         bool       `json:"parked"`
	Draining       bool       `json:"draining"`
	QueuedInMemory int        `json:"queued_in_memory"`
	MoreOnDisk     bool       `json:"more_on_disk"`
	NextAllowed    *time.Time `json:"next_allowed"`
	// NextAllowedWhy says what set NextAllowed: one of ClockReasons.
	NextAllowedWhy string `json:"next_allowed_why"`
	// NextAllowedCause is what the host last answered, when that was a
	// failure ("503", "robots.txt 503", "timeout"): what set a failure
	// wait.
	NextAllowedCause string      `json:"next_allowed_cause,omitempty"`
	GapSeconds       float64     `json:"gap_seconds"`
	CrawlDelay       float64     `json:"crawl_delay_seconds"`
	BackoffSeconds   float64     `json:"backoff_seconds"`
	ErrorStreak      int         `json:"error_streak"`
	Errors           int         `json:"errors"`
	Parks            int         `json:"parks"`
	GaveUp           bool        `json:"gave_up"`
	Robots           *HostRobots `json:"robots"`
	URLsAccepted     int64       `json:"urls_accepted"`
	// Policy is the operator's policy in force for the host, nil if none.
	Policy *policy.Policy `json:"policy"`
	// Activity is the host's recent fetches, counts and parks; GET
	// /v1/hosts/{host} only, nil when the crawl has forgotten them (a host
	// not fetched lately).
	Activity *history.Activity `json:"activity,omitempty"`
}

// HostRobots is the robots.txt answer a host's URLs are judged by.
type HostRobots struct {
	Outcome    string    `json:"outcome"`
	Status     int       `json:"status"`
	FetchedAt  time.Time `json:"fetched_at"`
	AgeSeconds float64   `json:"age_seconds"`
	// Why says why a "disallow-all" host is not crawled: what its fetch
	// failed with, or the Crawl-delay it asks for over --max-crawl-delay.
	Why string `json:"why,omitempty"`
}

// The states of a host, as Host.State names them.
const (
	StateGivenUp       = "given up"       // too many failures: its URLs are dropped
	StateHeld          = "held"           // paused by an operator (or its partition, by another node)
	StateRobotsBlocked = "robots-blocked" // robots.txt unreachable or disallowing all: its URLs are dropped
	StateInFlight      = "in flight"      // a request is out
	StateParked        = "parked"         // waiting out failures, or another host's robots.txt
	StateReady         = "ready"          // URLs queued and its clock allows a request now
	StateWaiting       = "waiting"        // URLs queued, its clock not yet
	StateIdle          = "idle"           // nothing queued
)

// HostStates lists the states, in the order they are judged.
var HostStates = []string{StateGivenUp, StateHeld, StateRobotsBlocked, StateInFlight, StateParked, StateReady, StateWaiting, StateIdle}

// ClockReasons lists what can set a host's next allowed time.
var ClockReasons = []string{"delay", "crawl-delay", "policy", "backoff", "latency", "Retry-After", "parked", "retry", "hold", ""}

// hostState names what the host is doing at now.
func hostState(f frontier.HostInfo, robotsBlocked bool, now time.Time) string {
	switch {
	case f.Clock.GaveUp:
		return StateGivenUp
	case f.Held || f.PartitionHeld:
		return StateHeld
	case robotsBlocked:
		return StateRobotsBlocked
	case f.Busy:
		return StateInFlight
	case f.Parked:
		return StateParked
	case f.Queued == 0 && !f.MoreOnDisk:
		return StateIdle
	case !f.Clock.NextAt.After(now):
		return StateReady
	}
	return StateWaiting
}

// clockWhy says what set a host's next allowed time: the largest term of
// its gap (the crawl's --delay, robots.txt Crawl-delay, an operator's
// policy delay, which the crawl applies as its Crawl-delay, or backoff
// after 429/503), or, when it lies beyond the last fetch plus that gap,
// the latency rule (or a Retry-After), or a park. "" when nothing holds it.
func clockWhy(st HostStatus, pol *policy.Policy, lastFetch time.Time, now time.Time) string {
	f, cl := st.Frontier, st.Frontier.Clock
	if cl.NextAt.IsZero() || !cl.NextAt.After(now) {
		return ""
	}
	if f.Parked {
		return "parked"
	}
	switch cl.Why {
	case frontier.WhyNone, frontier.WhyGap:
		// A clock of an older weft says nothing; a gap's term is found
		// below.
	default:
		return cl.Why.String()
	}
	if !lastFetch.IsZero() && cl.NextAt.Sub(lastFetch) > st.Gap+time.Second/10 {
		return "latency"
	}
	switch st.Gap {
	case cl.Backoff:
		if cl.Backoff > 0 {
			return "backoff"
		}
	case cl.CrawlDelay:
		if pol != nil && time.Duration(pol.Delay) == cl.CrawlDelay {
			return "policy"
		}
		return "crawl-delay"
	}
	return "delay"
}

// hostOf is a host's view; act is its recent activity, shown (the host
// page) or only read for the clock's why (the list).
func (s *Server) hostOf(st HostStatus, act *history.Activity, show bool) Host {
	now := time.Now()
	f, cl := st.Frontier, st.Frontier.Clock
	var pol *policy.Policy
	if p, ok := s.res.Policies.Policy(st.Host); ok {
		pol = &p
	}
	blocked := st.Robots != nil && st.Robots.Outcome == robots.DisallowAll || f.Draining && !cl.GaveUp
	var last time.Time
	if act != nil {
		last = act.LastFetch
	}
	h := Host{
		State: hostState(f, blocked, now), NextAllowedWhy: clockWhy(st, pol, last, now), NextAllowedCause: cl.Cause, Policy: pol,
		Host: st.Host, Held: f.Held, Busy: f.Busy, Parked: f.Parked, Draining: f.Draining,
		QueuedInMemory: f.Queued, MoreOnDisk: f.MoreOnDisk, GapSeconds: st.Gap.Seconds(),
		CrawlDelay: cl.CrawlDelay.Seconds(), BackoffSeconds: cl.Backoff.Seconds(),
		ErrorStreak: cl.Streak, Errors: cl.Errors, Parks: cl.Parks, GaveUp: cl.GaveUp, URLsAccepted: st.Accepted,
	}
	if show {
		h.Activity = act
	}
	if !cl.NextAt.IsZero() {
		t := cl.NextAt.UTC()
		h.NextAllowed = &t
	}
	if r := st.Robots; r != nil {
		h.Robots = &HostRobots{Outcome: r.Outcome.String(), Status: r.Status, FetchedAt: r.FetchedAt.UTC(), AgeSeconds: now.Sub(r.FetchedAt).Seconds(), Why: r.Err}
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
	st := s.res.Hosts.Host(name)
	if !st.Known && !st.Frontier.Held {
		return &Error{Status: http.StatusNotFound, Code: "unknown_host", Message: "the crawl knows nothing of " + name}
	}
	var act *history.Activity
	if a, ok := s.res.Hosts.Activity(name); ok {
		act = &a
	}
	return writeJSON(w, http.StatusOK, s.hostOf(st, act, true))
}

// holdHost is the handler that holds a host (on) or releases it.
func holdHost(on bool) func(*Server, http.ResponseWriter, *http.Request) error {
	return func(s *Server, w http.ResponseWriter, r *http.Request) error {
		name, err := hostParam(r)
		if err != nil {
			return err
		}
		name, err = s.res.Hosts.Hold(name, on)
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
	for _, st := range s.res.Hosts.Hosts(limit) {
		// Its activity dates its last fetch, so that the list says why
		// a host waits as its page does (the latency rule included).
		var act *history.Activity
		if a, ok := s.res.Hosts.Activity(st.Host); ok {
			act = &a
		}
		out.Hosts = append(out.Hosts, s.hostOf(st, act, false))
	}
	return writeJSON(w, http.StatusOK, out)
}

// Fetches is the body of GET /v1/fetches: the last fetches, newest first,
// as lines of the fetch log.
type Fetches struct {
	Fetches []json.RawMessage `json:"fetches"`
}

func (s *Server) fetches(w http.ResponseWriter, _ *http.Request) error {
	f := s.res.Fetches.Recent()
	if f == nil {
		f = []json.RawMessage{}
	}
	return writeJSON(w, http.StatusOK, Fetches{Fetches: f})
}
