package operator

import (
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/weft-crawler/weft/internal/crawl"
	"github.com/weft-crawler/weft/internal/frontier"
	"github.com/weft-crawler/weft/internal/importance"
	"github.com/weft-crawler/weft/internal/store"
	"github.com/weft-crawler/weft/internal/testfill"
)

// filled returns a T with every field filled.
func filled[T any]() T {
	var x T
	testfill.Fill(&x)
	return x
}

// noZero reports every field of v, but those skip names, left zero: a
// field of the API's that the conversion does not feed.
func noZero(t *testing.T, path string, v reflect.Value, skip ...string) {
	t.Helper()
	switch {
	case v.Kind() == reflect.Struct && v.Type() != reflect.TypeFor[time.Time]():
		for i := range v.NumField() {
			if f := v.Type().Field(i); f.IsExported() && !slices.Contains(skip, f.Name) {
				noZero(t, path+"."+f.Name, v.Field(i), skip...)
			}
		}
	case v.Kind() == reflect.Pointer && !v.IsNil():
		noZero(t, path, v.Elem(), skip...)
	case v.IsZero():
		t.Errorf("%s is zero: the conversion does not set it", path)
	}
}

// TestConversionsFeedEveryField: what the API shows of a crawl, its stats,
// metrics, URL records and pages, has each field set from the crawl's, so
// that none is left out of the JSON.
func TestConversionsFeedEveryField(t *testing.T) {
	live := filled[crawl.Live]()
	live.Frontier.Wait.At = testfill.At.Add(time.Minute) // a wait still to come
	// Cluster is the server's to fill.
	noZero(t, "Stats", reflect.ValueOf(statsOf(live, testfill.At)), "Cluster")
	noZero(t, "URLRecord", reflect.ValueOf(urlRecordOf(filled[store.URLPos](), filled[store.URLRecord](), filled[importance.Estimate]())))
	noZero(t, "Page", reflect.ValueOf(pageOf(filled[crawl.Page]())))
}

// TestWaitForTheNextRecrawl: with no host to wait for, a continuous
// crawl's wait is its next recrawl; a host to wait for comes first.
func TestWaitForTheNextRecrawl(t *testing.T) {
	now := testfill.At
	rw := &crawl.RecrawlWait{At: now.Add(time.Hour), Text: "1h0m0s for the next recrawl (nothing queued)"}
	w := waitStatsOf(frontier.Wait{}, rw, now)
	if w == nil || w.Why != "recrawl" || w.Host != "" || w.Until == nil || !w.Until.Equal(rw.At) || w.InSeconds != 3600 || w.Text != rw.Text {
		t.Errorf("idle frontier, a recrawl due in an hour: %+v", w)
	}
	if w := waitStatsOf(frontier.Wait{}, nil, now); w != nil {
		t.Errorf("idle frontier, no recrawl known: %+v, want none", w)
	}
	w = waitStatsOf(frontier.Wait{Host: "a.test", At: now.Add(time.Second)}, rw, now)
	if w == nil || w.Host != "a.test" || w.Why == "recrawl" {
		t.Errorf("a host to wait for and a recrawl: %+v, want the host", w)
	}
}
