package robots

import (
	"testing"
	"time"
)

func TestHistoryVerdict(t *testing.T) {
	day := 24 * time.Hour
	rfc := Retry{TTL: day, Attempts: 3, Wait: time.Minute}
	google := rfc
	google.LastGood = 30 * day
	good := Parse([]byte("User-agent: *\nDisallow: /private/\n"), "weft", 200, t0)
	fail := func(at time.Time) *Policy { return DisallowAllPolicy(503, "server error (503)", at) }

	// failures returns a history of n failures a minute apart after good
	// (nil for none), the last at last.
	failures := func(g *Policy, n int, last time.Time) History {
		h := History{}
		if g != nil {
			h.Record(g)
		}
		for i := n - 1; i >= 0; i-- {
			h.Record(fail(last.Add(-time.Duration(i) * time.Minute)))
		}
		return h
	}

	type want struct {
		outcome Outcome // 0: no policy
		until   time.Duration
	}
	cases := []struct {
		name  string
		h     History
		r     Retry
		now   time.Time
		want  want
		allow bool // for /private/x, when a policy is returned
	}{
		{"never fetched", History{}, rfc, t0, want{0, 0}, false},
		{"good and fresh", failures(good, 0, t0), rfc, t0.Add(time.Hour), want{Rules, day}, false},
		{"good but stale", failures(good, 0, t0), rfc, t0.Add(day), want{0, 0}, false},
		{"good from the future", failures(good, 0, t0), rfc, t0.Add(-time.Hour), want{0, 0}, false},
		{"one failure: wait a minute", failures(nil, 1, t0), rfc, t0.Add(time.Second), want{0, time.Minute}, false},
		{"one failure, a minute on: fetch", failures(nil, 1, t0), rfc, t0.Add(time.Minute), want{0, 0}, false},
		{"two failures: wait two minutes", failures(nil, 2, t0), rfc, t0.Add(time.Second), want{0, 2 * time.Minute}, false},
		{"three failures: disallow, retry in four", failures(nil, 3, t0), rfc, t0.Add(time.Second), want{DisallowAll, 4 * time.Minute}, false},
		{"many failures: retry at most a TTL on", failures(nil, 50, t0), rfc, t0.Add(time.Second), want{DisallowAll, day}, false},
		// 2m17.439s << 27 wraps past the TTL's range into a short wait if
		// shifted before it is compared.
		{"no overflow of the doubling", failures(nil, 28, t0), Retry{TTL: day, Attempts: 3, Wait: 137439 * time.Millisecond}, t0.Add(time.Second), want{DisallowAll, day}, false},
		{"a corrupt negative count", History{Failures: -5, FailingSince: t0, LastFailure: t0}, rfc, t0.Add(time.Second), want{0, time.Minute}, false},
		{"three failures after a good copy: still disallow (RFC)", failures(good, 3, t0.Add(day)), rfc, t0.Add(day + time.Second), want{DisallowAll, day + 4*time.Minute}, false},
		{"clock stepped back: fetch", failures(nil, 3, t0), rfc, t0.Add(-time.Hour), want{0, 0}, false},
		{"google: waits first", failures(good, 2, t0.Add(day)), google, t0.Add(day + time.Second), want{0, day + 2*time.Minute}, false},
		{"google: last good copy once unreachable", failures(good, 3, t0.Add(day)), google, t0.Add(day + time.Second), want{Rules, day + 4*time.Minute}, false},
		{"google: last good copy until 30 days old", failures(good, 30, t0.Add(30*day-time.Hour)), google, t0.Add(30*day - time.Minute), want{Rules, 30 * day}, false},
		{"google: no good copy, failing under 30 days", failures(nil, 3, t0), google, t0.Add(time.Second), want{DisallowAll, 4 * time.Minute}, false},
		{"google: failing for 30 days: no rules", History{Failures: 40, FailingSince: t0, LastFailure: t0.Add(30 * day), Status: 503}, google, t0.Add(30*day + time.Second), want{NoRules, 31 * day}, true},
		{"google: good copy too old, failing for 30 days", History{Good: good, Failures: 40, FailingSince: t0.Add(day), LastFailure: t0.Add(31 * day), Status: 503}, google, t0.Add(31*day + time.Second), want{NoRules, 32 * day}, true},
	}
	for _, tc := range cases {
		h := tc.h
		pol, until := h.Verdict(tc.now, tc.r)
		var got want
		if pol != nil {
			got.outcome = pol.Outcome
		}
		if !until.IsZero() {
			got.until = until.Sub(t0)
		}
		if got != tc.want {
			t.Errorf("%s: verdict %v until t0+%v, want %v until t0+%v", tc.name, got.outcome, got.until, tc.want.outcome, tc.want.until)
			continue
		}
		if pol != nil && pol.Allowed("/private/x") != tc.allow {
			t.Errorf("%s: /private/x allowed %v, want %v", tc.name, !tc.allow, tc.allow)
		}
	}
}

func TestHistoryRecord(t *testing.T) {
	var h History
	h.Record(DisallowAllPolicy(503, "a", t0))
	h.Record(DisallowAllPolicy(0, "b", t0.Add(time.Minute)))
	if h.Failures != 2 || !h.FailingSince.Equal(t0) || !h.LastFailure.Equal(t0.Add(time.Minute)) || h.Err != "b" || h.Status != 0 {
		t.Fatalf("after two failures: %+v", h)
	}
	h.Record(NoRulesPolicy(404, t0.Add(2*time.Minute)))
	if h.Failures != 0 || h.Good == nil || h.Good.Outcome != NoRules || !h.FailingSince.IsZero() {
		t.Fatalf("after a 404: %+v; a 404 is a good answer and ends the failures", h)
	}
}

func TestRetryValidate(t *testing.T) {
	ok := Retry{TTL: time.Hour, Attempts: 1, Wait: time.Second}
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []Retry{
		{TTL: 0, Attempts: 1, Wait: time.Second},
		{TTL: time.Hour, Attempts: 0, Wait: time.Second},
		{TTL: time.Hour, Attempts: 1, Wait: 0},
		{TTL: time.Hour, Attempts: 1, Wait: time.Second, LastGood: -1},
	} {
		if bad.Validate() == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
}
