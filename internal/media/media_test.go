package media

import (
	"strings"
	"testing"
)

func TestPolicy(t *testing.T) {
	p, err := New([]string{"text/*", "application/pdf", "Video/*", "application/xhtml+xml"}, []string{"video/*", "text/csv"},
		[]Cap{{"video/mp4", 50 << 20}, {"video/*", 1 << 20}, {"*/*", 5 << 20}, {"application/pdf", 32 << 20}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		mt    string
		limit int64
		ok    bool
	}{
		{"text/html", 5 << 20, true},        // accepted; the */* cap
		{"application/pdf", 32 << 20, true}, // its own cap
		{"text/csv", 0, true},               // rejected more specifically than accepted
		{"video/mp4", 0, true},              // reject video/* ties accept video/*: rejected
		{"image/png", 0, true},              // no accept rule matches
		{"", 0, true},                       // no type: accept rules name none
	} {
		limit, ok := p.BodyLimit(tc.mt)
		if limit != tc.limit || ok != tc.ok {
			t.Errorf("%q: limit %d ok %t, want %d %t", tc.mt, limit, ok, tc.limit, tc.ok)
		}
	}
	// Caps alone, every type accepted: the most specific cap decides, and
	// a type no cap names is left to the fetcher.
	p, _ = New(nil, nil, []Cap{{"video/*", 0}, {"video/mp4", 50 << 20}})
	for mt, want := range map[string][2]int64{"video/mp4": {50 << 20, 1}, "video/webm": {0, 1}, "text/html": {0, 0}, "": {0, 0}} {
		limit, ok := p.BodyLimit(mt)
		if limit != want[0] || ok != (want[1] == 1) {
			t.Errorf("caps: %q: %d %t, want %v", mt, limit, ok, want)
		}
	}
	var none *Policy
	if _, ok := none.BodyLimit("text/html"); ok {
		t.Error("a nil policy decided")
	}
}

func TestPolicyErrorsNameTheRule(t *testing.T) {
	for _, tc := range []struct {
		accept, reject []string
		caps           []Cap
		want           string
	}{
		{[]string{"text"}, nil, nil, `accept "text"`},
		{nil, []string{"*/html"}, nil, `reject "*/html"`},
		{nil, nil, []Cap{{"a/b/c", 1}}, `cap "a/b/c"`},
		{nil, nil, []Cap{{"a/b", -1}}, "negative"},
	} {
		if _, err := New(tc.accept, tc.reject, tc.caps); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %s", tc, err, tc.want)
		}
	}
	for in, want := range map[string]int64{"application/pdf=32MiB": 32 << 20, "video/*=0": 0, "*/*=1024": 1024, "image/png= 2 KiB": 2048, "image/*=2MB": 2_000_000} {
		c, err := ParseCap(in)
		if err != nil || c.Bytes != want {
			t.Errorf("ParseCap(%q) = %v, %v", in, c, err)
		}
	}
	for _, in := range []string{"pdf", "a/b=", "a/b=-1", "a/b=2k", "a/b=1PB"} {
		if _, err := ParseCap(in); err == nil || !strings.Contains(err.Error(), in) {
			t.Errorf("ParseCap(%q): %v", in, err)
		}
	}
}
