// Package answer reads what a request got, a response or an error, as its
// host's clock hears it: a frontier.Signal (an answer, a failure, strain,
// a request to slow down), the wait the server asked for, and the few
// words a host's wait is explained by. Pages and robots.txt files are
// read alike, so politeness does not depend on which was asked.
package answer

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/weft-crawler/weft/internal/fetch"
	"github.com/weft-crawler/weft/internal/frontier"
)

// StatusSignal classifies a response for the host's clock: 429 asks for
// less, 503 asks for less and is a failure, another 5xx is a failure, and
// anything else is an answer. retryAfter is the wait the server asked for.
func StatusSignal(status int, h http.Header, now time.Time) (s frontier.Signal, retryAfter time.Duration) {
	switch {
	case status == http.StatusTooManyRequests:
		s = frontier.Throttled
	case status == http.StatusServiceUnavailable:
		s = frontier.Unavailable
	case status >= 500:
		return frontier.Failed, 0
	default:
		return frontier.OK, 0
	}
	return s, parseRetryAfter(h.Get("Retry-After"), now)
}

// Transient reports whether a fetch failed in a way the next try may
// well not: a 500, 502 or 504 answer (a server error, a proxy that found
// its backend down or slow), or, with no answer (status 0), a timeout or
// a broken connection. A 429 and a 503 are not: they ask to come back
// later, which the host's clock does. The other errors (DNS, TLS, a
// malformed response, an address refused) would fail again.
func Transient(status int, kind fetch.Kind) bool {
	switch status {
	case 0:
		return kind == fetch.KindTimeout || kind == fetch.KindConnect
	case http.StatusInternalServerError, http.StatusBadGateway, http.StatusGatewayTimeout:
		return true
	}
	return false
}

// parseRetryAfter reads Retry-After (RFC 9110 §10.2.3): delay-seconds or an
// HTTP date. Anything else, or a time in the past, is no wait.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if n, err := strconv.ParseUint(v, 10, 63); err == nil {
		if n > uint64((1<<63-1)/int64(time.Second)) {
			return time.Duration(1<<63 - 1)
		}
		return time.Duration(n) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// Signal classifies a fetch that got a response: as StatusSignal does,
// except that a body cut off by the server or by the silence timeout is
// strain (frontier.Strained), whatever its status said, unless the server
// asked for less (429, 503), which it already honours.
func Signal(resp *fetch.Response, now time.Time) (s frontier.Signal, retryAfter time.Duration) {
	s, retryAfter = StatusSignal(resp.StatusCode, resp.Header, now)
	if (s == frontier.OK || s == frontier.Failed) && strainedBody(resp.Truncated) {
		s = frontier.Strained
	}
	return s, retryAfter
}

// Cause is what a response that was not a plain answer got, in the few
// words a host's wait is explained by (frontier.Result.Cause): its status,
// or how its body was cut.
func Cause(resp *fetch.Response, s frontier.Signal) string {
	switch {
	case s == frontier.OK:
		return ""
	case s == frontier.Strained && strainedBody(resp.Truncated):
		return "body cut (" + resp.Truncated + ")"
	}
	return strconv.Itoa(resp.StatusCode)
}

// strainedBody says whether a body cut short for this reason (a
// fetch.Response's Truncated) was cut by the server's trouble, not by the
// crawler's own size cap.
func strainedBody(truncated string) bool {
	return truncated == fetch.TruncatedTime || truncated == fetch.TruncatedDisconnect
}

// Failed is how a request that got no response after took moves its
// host's clock (see ErrorSignal). One that never reached the server (a
// refused connection, a TLS handshake that failed or never ended) left no
// work there: its wait is the doubling backoff alone, not the latency
// rule's multiple of the time spent failing to connect, so the retries
// of a robots.txt keep to --robots-retry.
func Failed(err error, took time.Duration) frontier.Result {
	kind := fetch.KindOf(err)
	fetched, signal := ErrorSignal(kind)
	if fetch.Unsent(err) {
		took = 0
	}
	return frontier.Result{Fetched: fetched, Signal: signal, Took: took, Cause: kind.String()}
}

// ErrorSignal classifies a fetch that got no response. Errors before any
// request reached the host (DNS, refused address, bad URL) do not arm the
// clock at all; those after do and count as failures. A timeout or a
// connection that broke is strain: the server may still be busy with the
// request, and the host's next one waits for it (frontier.Strained).
func ErrorSignal(kind fetch.Kind) (fetched bool, s frontier.Signal) {
	switch kind {
	case fetch.KindRefused, fetch.KindDNS, fetch.KindBadURL:
		return false, frontier.OK
	case fetch.KindTimeout, fetch.KindConnect:
		return true, frontier.Strained
	}
	return true, frontier.Failed
}

// Class is the class a status is counted in: "2xx", "5xx", ..., or
// "other" for a code outside 100 to 599.
func Class(code int) string {
	if code < 100 || code > 599 {
		return "other"
	}
	return fmt.Sprintf("%dxx", code/100)
}
