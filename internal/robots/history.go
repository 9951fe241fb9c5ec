package robots

import (
	"fmt"
	"time"
)

// Retry says how long an answer is used and what a host whose robots.txt
// cannot be fetched gets (RFC 9309 §2.3.1.4 and §2.4).
type Retry struct {
	// TTL is how long a fetched answer is used before the file is fetched
	// again. RFC 9309 asks for at most 24 hours.
	TTL time.Duration
	// Attempts failed fetches in a row make the file unreachable. Before
	// that the host waits, its URLs kept, and the file is fetched again;
	// from then on the host is completely disallowed (or, with LastGood,
	// gets Google's treatment) while the file goes on being retried.
	Attempts int
	// Wait is the wait after the first failure before the next attempt,
	// doubled after each failure and at most TTL.
	Wait time.Duration
	// LastGood turns on Google's rule: once the file is unreachable, the
	// last good answer is used for up to LastGood after it was fetched, and
	// a file that has failed for LastGood is treated as absent (no rules).
	// Zero keeps RFC 9309's complete disallow for as long as it fails.
	// Google uses 30 days.
	LastGood time.Duration
}

// Validate reports the first invalid field.
func (r Retry) Validate() error {
	switch {
	case r.TTL <= 0:
		return fmt.Errorf("robots: TTL %v is not positive", r.TTL)
	case r.Attempts < 1:
		return fmt.Errorf("robots: %d attempts; at least one is needed", r.Attempts)
	case r.Wait <= 0:
		return fmt.Errorf("robots: retry wait %v is not positive", r.Wait)
	case r.LastGood < 0:
		return fmt.Errorf("robots: last-good window %v is negative", r.LastGood)
	}
	return nil
}

// History is what a host's robots.txt fetches have said: the last good
// answer and the failures since. It is what a crawler keeps per host, and
// all Verdict needs. The zero History has never been fetched.
type History struct {
	// Good is the last Rules or NoRules policy, nil if there was none.
	Good *Policy
	// Failures counts the DisallowAll outcomes (server or network errors)
	// since Good, or since the first fetch.
	Failures int
	// FailingSince and LastFailure are when the first and the last of them
	// were fetched; Status and Err are the last one's.
	FailingSince, LastFailure time.Time
	Status                    int
	Err                       string
}

// Record adds the outcome of a fetch: a Rules or NoRules policy becomes the
// good answer and ends the failures; a DisallowAll one is a failure.
func (h *History) Record(p *Policy) {
	if p.Outcome != DisallowAll {
		*h = History{Good: p}
		return
	}
	if h.Failures == 0 {
		h.FailingSince = p.FetchedAt
	}
	h.Failures++
	h.LastFailure, h.Status, h.Err = p.FetchedAt, p.Status, p.Err
}

// Verdict says what the history means at now. With a policy, the host's
// URLs are judged by it until the time returned, when the file is to be
// fetched again. Without one, the time says when the file may be fetched:
// now or earlier means fetch it now; later means the file failed and is
// retried then, the host's URLs kept meanwhile.
func (h *History) Verdict(now time.Time, r Retry) (*Policy, time.Time) {
	if h.Failures == 0 {
		if h.Good == nil || !h.Good.Fresh(now, r.TTL) {
			return nil, time.Time{}
		}
		return h.Good, h.Good.FetchedAt.Add(r.TTL)
	}
	// Wait doubled per failure before this one, at most TTL; compared
	// before shifting, so that a long run of failures cannot overflow.
	wait := r.TTL
	if n := max(h.Failures-1, 0); n < 62 && r.Wait <= r.TTL>>n {
		wait = r.Wait << n
	}
	retryAt := h.LastFailure.Add(wait)
	if !now.Before(retryAt) || now.Before(h.LastFailure) {
		// Time to try again; or the clock was stepped back past the
		// failure, and nothing is known of how long ago it was.
		return nil, time.Time{}
	}
	switch {
	case h.Failures < r.Attempts:
		return nil, retryAt
	case r.LastGood > 0 && h.Good != nil && now.Sub(h.Good.FetchedAt) < r.LastGood && !now.Before(h.Good.FetchedAt):
		return h.Good, earlier(retryAt, h.Good.FetchedAt.Add(r.LastGood))
	case r.LastGood > 0 && now.Sub(h.FailingSince) >= r.LastGood:
		p := NoRulesPolicy(h.Status, h.LastFailure)
		p.Err = fmt.Sprintf("unreachable since %s (%s): treated as absent", h.FailingSince.UTC().Format(time.RFC3339), h.Err)
		return p, retryAt
	}
	return DisallowAllPolicy(h.Status, h.Err, h.LastFailure), retryAt
}

func earlier(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}
