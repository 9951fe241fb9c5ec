// Package robots turns the outcome of one host's robots.txt fetch into a
// Policy that answers, without re-parsing, whether a URL may be crawled.
//
// Matching follows RFC 9309 and Google's reference matcher
// (github.com/google/robotstxt, ported as github.com/jimsmart/grobotstxt,
// whose line parser this package drives): the groups naming our product
// token exactly, else the "*" groups; the longest matching rule wins and
// Allow wins a tie; '*' matches any run of octets and a final '$' anchors
// the end. Unlike the reference matcher, which expects its caller to
// normalise URLs, this package compares rule and URL in the form RFC 9309
// §2.2.2 prescribes, so "/%7Efoo" and "/~foo" are the same path (see
// Policy.Allowed).
//
// The crawler owns the fetch (HTTP, redirects, politeness); this package is
// pure functions over its result. A Policy is immutable once built and safe
// for concurrent use.
package robots

import (
	"strconv"
	"strings"
	"time"
)

// MaxBytes is how much of a robots.txt body is parsed. RFC 9309 §2.5 asks
// crawlers to parse at least 500 KiB; what follows is ignored (see Parse).
const MaxBytes = 500 << 10

// MaxCrawlDelay caps Policy.CrawlDelay. Crawl-delay is not part of RFC 9309
// and sites write absurd values (86400, 1e9) that would overflow a
// Duration. Thirty days still honours every value a site means, however
// long, where a shorter cap would send requests sooner than the site
// asked; a crawl that will not wait that long refuses the host
// (DelayRefused) rather than shortening its delay.
const MaxCrawlDelay = 30 * 24 * time.Hour

// maxSitemaps caps Policy.Sitemaps: a 500 KiB file could otherwise name
// ~10,000 sitemaps, each a fetch the crawler would schedule.
const maxSitemaps = 1000

// Outcome says what the robots.txt fetch amounted to.
type Outcome int

const (
	// Rules: a 2xx body was parsed; its rules decide.
	Rules Outcome = iota + 1
	// NoRules: the file is unavailable (4xx, or too many redirects); RFC 9309
	// §2.3.1.3 lets the crawler access everything.
	NoRules
	// DisallowAll: the file is unreachable (5xx, 429, timeout, network
	// error); RFC 9309 §2.3.1.4 says to assume complete disallow.
	DisallowAll
)

// String returns "rules", "no-rules" or "disallow-all" (for metric labels).
func (o Outcome) String() string {
	switch o {
	case Rules:
		return "rules"
	case NoRules:
		return "no-rules"
	case DisallowAll:
		return "disallow-all"
	}
	return "outcome(" + strconv.Itoa(int(o)) + ")"
}

// Policy is the robots.txt verdict for one host, for one product token.
//
// The zero Policy (and a nil *Policy) has no Outcome and allows nothing but
// /robots.txt: a host whose robots.txt has not been decided is not crawled.
// Build Policies with Parse, FromStatus, NoRulesPolicy or DisallowAllPolicy;
// do not modify one after it is shared.
type Policy struct {
	Outcome Outcome
	// Status is the HTTP status of the final response, 0 if there was none.
	Status int
	// Err says why, for a DisallowAll policy (network error, server
	// error, a Crawl-delay refused: DelayRefused), in words, for logs, the
	// API and the summary; never to decide on.
	Err string
	// FetchedAt is when the fetch finished; Fresh ages the policy from it.
	FetchedAt time.Time
	// CrawlDelay is the Crawl-delay of the groups that apply to our token,
	// 0 if none did or the value was not a non-negative decimal number of
	// seconds; at most MaxCrawlDelay. Several values: the largest.
	CrawlDelay time.Duration
	// Sitemaps are the Sitemap: values in file order, as written (they
	// should be absolute URLs; the caller validates), duplicates dropped, at
	// most 1000.
	Sitemaps []string
	// Truncated reports that the body exceeded MaxBytes and its tail was
	// ignored.
	Truncated bool
	// DelayRefused says the crawl refuses the host although its file may
	// allow it: its CrawlDelay is longer than the crawl will wait (see
	// DelayRefusedPolicy). Outcome is then DisallowAll.
	DelayRefused bool

	// The rules of the groups that apply to our token, ordered so that the
	// first match decides (see compile).
	ruleSet
	index *prefixIndex // nil for fewer than indexMin rules
}

// NoRulesPolicy returns a policy that allows everything.
func NoRulesPolicy(status int, fetchedAt time.Time) *Policy {
	return &Policy{Outcome: NoRules, Status: status, FetchedAt: fetchedAt}
}

// DisallowAllPolicy returns a policy that allows nothing but /robots.txt.
func DisallowAllPolicy(status int, err string, fetchedAt time.Time) *Policy {
	return &Policy{Outcome: DisallowAll, Status: status, Err: err, FetchedAt: fetchedAt}
}

// DelayRefusedPolicy returns the policy of a host whose robots.txt (pol)
// asks for a Crawl-delay longer than most, the longest a crawl will wait
// between two requests: it allows nothing but /robots.txt, as Nutch's
// fetcher.max.crawl.delay skips such a host, rather than crawling it
// sooner than it asked. Err names the Crawl-delay; the policy's own is
// zero, as a DisallowAll policy's: no request is made under it but the
// next robots.txt fetch, once its verdict expires, and a clock kept an
// hour or a day ahead would hold a resumed crawl that ends on the host's
// queued URLs rather than let them be dropped.
func DelayRefusedPolicy(pol *Policy, most time.Duration) *Policy {
	return &Policy{Outcome: DisallowAll, Status: pol.Status, FetchedAt: pol.FetchedAt, DelayRefused: true,
		Err: "Crawl-delay " + pol.CrawlDelay.String() + " is longer than the crawl waits for a host (" + most.String() + ")"}
}

// FromStatus maps the final response of a robots.txt fetch to a policy
// (RFC 9309 §2.3.1):
//
//   - 2xx: Parse the body.
//   - 3xx: the caller reports a redirect it did not follow, which means its
//     redirect limit (RFC 9309: at least five hops) was exceeded; the file
//     is then unavailable: NoRules.
//   - 429: DisallowAll. The server asks us to slow down; treating it as
//     "unavailable, crawl freely" would answer that with a full crawl.
//     Google treats 429 as a server error for the same reason.
//   - other 4xx (including 401 and 403): NoRules.
//   - 5xx: DisallowAll.
//   - anything else (0, 1xx, ≥600): DisallowAll; call DisallowAllPolicy
//     directly when there was a network error to record.
func FromStatus(status int, body []byte, productToken string, fetchedAt time.Time) *Policy {
	switch {
	case status >= 200 && status < 300:
		return Parse(body, productToken, status, fetchedAt)
	case status >= 300 && status < 400:
		return NoRulesPolicy(status, fetchedAt)
	case status == 429:
		return DisallowAllPolicy(status, "too many requests (429)", fetchedAt)
	case status >= 400 && status < 500:
		return NoRulesPolicy(status, fetchedAt)
	case status >= 500 && status < 600:
		return DisallowAllPolicy(status, "server error ("+strconv.Itoa(status)+")", fetchedAt)
	}
	return DisallowAllPolicy(status, "unexpected status ("+strconv.Itoa(status)+")", fetchedAt)
}

// Fresh reports whether the policy may still be used at now: its age is at
// least zero and less than ttl. A FetchedAt in the future (the clock was
// stepped back) counts as stale, so the file is fetched again rather than
// trusted for an unknown time. RFC 9309 §2.4 asks not to use a cached copy
// for more than 24 hours unless the file is unreachable.
func (p *Policy) Fresh(now time.Time, ttl time.Duration) bool {
	if p == nil {
		return false
	}
	age := now.Sub(p.FetchedAt)
	return age >= 0 && age < ttl
}

// ProductToken extracts the robots.txt product token from a User-Agent
// header value: the text before the first '/', space or '(', lowercased,
// with every character outside [a-zA-Z_-] removed (RFC 9309 §2.2.1).
// "weft/0.1 (+https://x.example/bot)" gives "weft".
func ProductToken(userAgent string) string {
	s := strings.TrimLeft(userAgent, " \t")
	if i := strings.IndexAny(s, "/ (\t"); i >= 0 {
		s = s[:i]
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', c == '_', c == '-':
			b = append(b, c)
		case 'A' <= c && c <= 'Z':
			b = append(b, c+'a'-'A')
		}
	}
	return string(b)
}
