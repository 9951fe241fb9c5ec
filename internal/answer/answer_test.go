package answer

import (
	"errors"
	"net/http"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/weft-crawler/weft/internal/fetch"
	"github.com/weft-crawler/weft/internal/frontier"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestStatusSignal(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		status     int
		retryAfter string
		want       frontier.Signal
		wait       time.Duration
	}{
		{200, "", frontier.OK, 0},
		{404, "30", frontier.OK, 0}, // a Retry-After means nothing on an answer
		{429, "30", frontier.Throttled, 30 * time.Second},
		{429, "", frontier.Throttled, 0},
		{503, now.Add(time.Hour).Format(http.TimeFormat), frontier.Unavailable, time.Hour},
		{503, now.Add(-time.Hour).Format(http.TimeFormat), frontier.Unavailable, 0}, // in the past: no wait
		{503, "soon", frontier.Unavailable, 0},
		{503, " 7 ", frontier.Unavailable, 7 * time.Second},
		{503, "99999999999999999999", frontier.Unavailable, 0}, // over uint63: not a number
		{429, "9223372036854775807", frontier.Throttled, time.Duration(1<<63 - 1)},
		{500, "30", frontier.Failed, 0},
	} {
		h := http.Header{}
		if tc.retryAfter != "" {
			h.Set("Retry-After", tc.retryAfter)
		}
		s, wait := StatusSignal(tc.status, h, now)
		if s != tc.want || wait != tc.wait {
			t.Errorf("%d, Retry-After %q: %v, %v; want %v, %v", tc.status, tc.retryAfter, s, wait, tc.want, tc.wait)
		}
	}
}

// A body the server cut (or went silent in) is strain whatever its
// status, unless the server asked for less; one cut by the crawler's own
// size cap is not.
func TestSignalAndCause(t *testing.T) {
	now := time.Now()
	for _, tc := range []struct {
		status    int
		truncated string
		want      frontier.Signal
		cause     string
	}{
		{200, "", frontier.OK, ""},
		{200, fetch.TruncatedLength, frontier.OK, ""},
		{200, fetch.TruncatedTime, frontier.Strained, "body cut (" + fetch.TruncatedTime + ")"},
		{500, fetch.TruncatedDisconnect, frontier.Strained, "body cut (" + fetch.TruncatedDisconnect + ")"},
		{500, "", frontier.Failed, "500"},
		{503, fetch.TruncatedTime, frontier.Unavailable, "503"},
		{429, "", frontier.Throttled, "429"},
	} {
		resp := &fetch.Response{StatusCode: tc.status, Header: http.Header{}, Truncated: tc.truncated}
		s, _ := Signal(resp, now)
		if s != tc.want {
			t.Errorf("%d cut %q: signal %v, want %v", tc.status, tc.truncated, s, tc.want)
		}
		if c := Cause(resp, s); c != tc.cause {
			t.Errorf("%d cut %q: cause %q, want %q", tc.status, tc.truncated, c, tc.cause)
		}
	}
}

// A request that never reached the server does not arm the clock, or (a
// connection that failed) arms it with the backoff alone, not the time
// spent failing.
func TestFailed(t *testing.T) {
	const took = 3 * time.Second
	for _, tc := range []struct {
		err     error
		fetched bool
		signal  frontier.Signal
		took    time.Duration
	}{
		{&fetch.Error{Kind: fetch.KindDNS, Unsent: true}, false, frontier.OK, 0},
		{&fetch.Error{Kind: fetch.KindRefused, Unsent: true}, false, frontier.OK, 0},
		{&fetch.Error{Kind: fetch.KindBadURL}, false, frontier.OK, took},
		{&fetch.Error{Kind: fetch.KindConnect, Unsent: true}, true, frontier.Strained, 0},
		{&fetch.Error{Kind: fetch.KindTimeout}, true, frontier.Strained, took},
		{&fetch.Error{Kind: fetch.KindTLS, Unsent: true}, true, frontier.Failed, 0},
		{&fetch.Error{Kind: fetch.KindProtocol}, true, frontier.Failed, took},
		{errors.New("not a fetch error"), true, frontier.Failed, took},
	} {
		res := Failed(tc.err, took)
		kind := fetch.KindOf(tc.err)
		if res.Fetched != tc.fetched || res.Signal != tc.signal || res.Took != tc.took || res.Cause != kind.String() {
			t.Errorf("%v: %+v; want fetched %t, signal %v, took %v, cause %s", kind, res, tc.fetched, tc.signal, tc.took, kind)
		}
	}
}

func TestClass(t *testing.T) {
	for code, want := range map[int]string{-1: "other", 0: "other", 99: "other", 100: "1xx", 204: "2xx", 399: "3xx", 451: "4xx", 599: "5xx", 600: "other"} {
		if got := Class(code); got != want {
			t.Errorf("Class(%d) = %q, want %q", code, got, want)
		}
	}
}

// TestTransient: a server error, a gateway's and a failure without an
// answer that a second try may not meet are transient; answers that ask
// to come back later, other statuses and errors that would recur are not.
func TestTransient(t *testing.T) {
	for _, tc := range []struct {
		status int
		kind   fetch.Kind
		want   bool
	}{
		{500, fetch.KindUnknown, true}, {502, fetch.KindUnknown, true}, {504, fetch.KindUnknown, true},
		{0, fetch.KindTimeout, true}, {0, fetch.KindConnect, true},
		{503, fetch.KindUnknown, false}, {429, fetch.KindUnknown, false}, {501, fetch.KindUnknown, false},
		{404, fetch.KindUnknown, false}, {200, fetch.KindUnknown, false},
		{0, fetch.KindDNS, false}, {0, fetch.KindTLS, false}, {0, fetch.KindProtocol, false}, {0, fetch.KindRefused, false},
		{0, fetch.KindCanceled, false}, {0, fetch.KindBadURL, false},
	} {
		if got := Transient(tc.status, tc.kind); got != tc.want {
			t.Errorf("Transient(%d, %s) = %v, want %v", tc.status, tc.kind, got, tc.want)
		}
	}
}
