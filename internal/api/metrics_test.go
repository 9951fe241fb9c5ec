package api

import (
	"strings"
	"testing"
	"time"

	"github.com/weft-crawler/weft/internal/crawl"
)

// zeroCrawl is a crawl that has fetched nothing yet.
type zeroCrawl struct{ fakeCrawl }

func (*zeroCrawl) Live() crawl.Live       { return crawl.Live{} }
func (*zeroCrawl) Metrics() crawl.Metrics { return crawl.Metrics{} }

// TestMetricsFromTheStart: before any fetch, /metrics has a series at 0
// for each error kind, each status class, and for the per-host 429 and
// 5xx counters, so that alert expressions have data from the start.
func TestMetricsFromTheStart(t *testing.T) {
	_, cfg := liveWeb(t, 31, 1, 1, 1, time.Millisecond)
	c, err := crawl.New(cfg) // not run: nothing fetched
	if err != nil {
		t.Fatal(err)
	}
	defer c.Discard()
	for name, cr := range map[string]Crawl{"a crawl not started": c.Operator(), "a crawl with no counts": &zeroCrawl{}} {
		s, err := New(Config{Addr: "127.0.0.1:0"}, cr)
		if err != nil {
			t.Fatal(err)
		}
		code, _, metrics := do(t, s, "GET", "/metrics", "", "")
		if code != 200 {
			t.Fatalf("%s: /metrics %d", name, code)
		}
		var want []string
		for _, k := range []string{"unknown", "dns", "refused", "connect", "timeout", "tls", "protocol", "canceled", "bad_url"} {
			want = append(want, `weft_fetch_errors_total{kind="`+k+`"} 0`)
		}
		for _, class := range []string{"1xx", "2xx", "3xx", "4xx", "5xx", "other"} {
			want = append(want, `weft_fetches_total{class="`+class+`"} 0`)
		}
		want = append(want, `weft_host_throttled_total{host=""} 0`, `weft_host_server_errors_total{host=""} 0`, "weft_throttled_total 0", "weft_unavailable_total 0")
		for _, w := range want {
			if !strings.Contains(metrics, "\n"+w+"\n") {
				t.Errorf("%s: /metrics lacks %q", name, w)
			}
		}
	}
	// Once a host has one, it is named, and the series without a host goes.
	s, err := New(Config{Addr: "127.0.0.1:0"}, &fakeCrawl{})
	if err != nil {
		t.Fatal(err)
	}
	_, _, metrics := do(t, s, "GET", "/metrics", "", "")
	if strings.Contains(metrics, `{host=""}`) || !strings.Contains(metrics, `weft_fetch_errors_total{kind="timeout"} 1`) || !strings.Contains(metrics, `weft_fetch_errors_total{kind="dns"} 0`) {
		t.Errorf("with counts: %s", metrics)
	}
}
