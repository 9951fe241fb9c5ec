package api

import (
	"strings"
	"testing"
)

// zeroCrawl is a crawl that has fetched nothing yet.
type zeroCrawl struct{}

func (zeroCrawl) Stats() Stats { return Stats{} }
func (zeroCrawl) Metrics() Metrics {
	return Metrics{StatusClasses: []string{"1xx", "2xx", "3xx", "4xx", "5xx", "other"}, ErrorKinds: []string{"unknown", "dns", "timeout"}}
}
func (zeroCrawl) Pause()  {}
func (zeroCrawl) Resume() {}

// TestMetricsFromTheStart: before any fetch, /metrics has a series at 0
// for each error kind and each status class the crawl knows of, and for
// the per-host 429 and 5xx counters, so that alert expressions have data
// from the start. (internal/operator's test of the same name shows a crawl
// knows every one.)
func TestMetricsFromTheStart(t *testing.T) {
	res := resourcesOf(&fakeCrawl{})
	res.Crawl = zeroCrawl{}
	s, err := New(Config{Addr: "127.0.0.1:0"}, res)
	if err != nil {
		t.Fatal(err)
	}
	code, _, metrics := do(t, s, "GET", "/metrics", "", "")
	if code != 200 {
		t.Fatalf("/metrics %d", code)
	}
	var want []string
	for _, k := range []string{"unknown", "dns", "timeout"} {
		want = append(want, `weft_fetch_errors_total{kind="`+k+`"} 0`)
	}
	for _, class := range []string{"1xx", "2xx", "3xx", "4xx", "5xx", "other"} {
		want = append(want, `weft_fetches_total{class="`+class+`"} 0`)
	}
	want = append(want, `weft_host_throttled_total{host=""} 0`, `weft_host_server_errors_total{host=""} 0`, "weft_throttled_total 0", "weft_unavailable_total 0")
	for _, w := range want {
		if !strings.Contains(metrics, "\n"+w+"\n") {
			t.Errorf("/metrics lacks %q", w)
		}
	}
	// Once a host has one, it is named, and the series without a host goes.
	s, err = New(Config{Addr: "127.0.0.1:0"}, resourcesOf(&fakeCrawl{}))
	if err != nil {
		t.Fatal(err)
	}
	_, _, metrics = do(t, s, "GET", "/metrics", "", "")
	if strings.Contains(metrics, `{host=""}`) || !strings.Contains(metrics, `weft_fetch_errors_total{kind="timeout"} 1`) || !strings.Contains(metrics, `weft_fetch_errors_total{kind="dns"} 0`) {
		t.Errorf("with counts: %s", metrics)
	}
}
