package report

import (
	"encoding/json"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/weft-crawler/weft/internal/archive"
	"github.com/weft-crawler/weft/internal/judge"
)

// snakeKey is a JSON key as the API, the events and the summary write
// them.
var snakeKey = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)

// Every field of the summary, and of the types it holds (weft's own, in
// whichever package), has a snake_case
// JSON key (or none, for Elapsed, written as elapsed_seconds): a field
// added without one fails here, not in a script that reads the summary.
func TestSummaryKeysAreSnakeCase(t *testing.T) {
	seen := map[reflect.Type]bool{}
	var walk func(typ reflect.Type)
	walk = func(typ reflect.Type) {
		for typ.Kind() == reflect.Pointer || typ.Kind() == reflect.Slice || typ.Kind() == reflect.Map {
			typ = typ.Elem()
		}
		if typ.Kind() != reflect.Struct || seen[typ] || !strings.HasPrefix(typ.PkgPath(), "github.com/weft-crawler/weft/") {
			return
		}
		seen[typ] = true
		for f := range typ.Fields() {
			if !f.IsExported() {
				continue
			}
			key, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if key == "-" && typ == reflect.TypeFor[Summary]() && f.Name == "Elapsed" {
				continue
			}
			if !snakeKey.MatchString(key) {
				t.Errorf("%s.%s: JSON key %q, want a snake_case one", typ.Name(), f.Name, key)
			}
			walk(f.Type)
		}
	}
	walk(reflect.TypeFor[Summary]())
	if len(seen) < 6 {
		t.Errorf("walked only %d types", len(seen))
	}
}

// The summary as JSON: the keys scripts read, elapsed in seconds as
// GET /v1/stats gives it, nested values snake_case too, and read back
// alike.
func TestSummaryJSON(t *testing.T) {
	sum := Summary{
		StoppedBy: "max-pages", Elapsed: 1500 * time.Millisecond, Pages: 10, RobotsFetches: 2, SeenFalsePos: 1,
		RequisiteFetches: 3, SitemapFetches: 4,
		ByStatus: map[string]int64{"2xx": 9}, WARCFiles: []string{"a.warc.gz"},
		TrapCosts: []judge.TrapCost{{Host: "t.test", Requests: 3, Refused: map[string]int64{"pattern": 5}, Held: 6}},
		Held:      map[string]int64{judge.HeldQuery: 6}, Released: 2,
		WARCUploads:    &archive.Uploads{Files: 1, Failed: 2, LastError: "x"},
		Browser:        &RenderSummary{Mode: "auto", NewLinks: 4},
		HostsDownNamed: []HostCause{{Host: "d.test", Cause: "tls"}},
		SeedFailures:   []SeedFailure{{URL: "http://s.test/", Reason: "robots"}},
		DeferredHosts:  []DeferredHost{{Host: "w.test", URLs: 2}},
	}
	b, err := json.Marshal(sum)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]any{
		"stopped_by": "max-pages", "elapsed_seconds": 1.5, "pages": 10.0, "robots_fetches": 2.0, "seen_false_positives": 1.0,
		"requisite_fetches": 3.0, "sitemap_fetches": 4.0,
		"by_status": map[string]any{"2xx": 9.0}, "warc_files": []any{"a.warc.gz"},
		"held_past_trap_budget": map[string]any{"query-budget": 6.0}, "held_released": 2.0,
	} {
		if !reflect.DeepEqual(m[key], want) {
			t.Errorf("%s: %#v, want %#v", key, m[key], want)
		}
	}
	for _, old := range []string{"StoppedBy", "Elapsed", "Pages", "WARCFiles"} {
		if _, ok := m[old]; ok {
			t.Errorf("the old key %s is still written", old)
		}
	}
	nested := map[string]string{"trap_costs": "held", "warc_uploads": "last_error", "browser": "new_links", "hosts_down_named": "cause", "seed_failures": "reason", "deferred_hosts": "urls"}
	for key, inner := range nested {
		v := m[key]
		if l, ok := v.([]any); ok && len(l) > 0 {
			v = l[0]
		}
		if o, ok := v.(map[string]any); !ok || o[inner] == nil {
			t.Errorf("%s: %v, want an object with %q", key, m[key], inner)
		}
	}
	if u, _ := m["warc_uploads"].(map[string]any); u == nil || u["failures"] != 2.0 {
		t.Errorf("warc_uploads: %v, want failures 2 as /v1/stats names them", u)
	}
	var back Summary
	if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back, sum) {
		t.Errorf("read back: %+v, %v\nwant %+v", back, err, sum)
	}
}

// The render line of the summary says what rendering did, and nothing
// when it did nothing: a crawl of plain pages renders none.
func TestRenderSummaryLine(t *testing.T) {
	for _, c := range []struct {
		sum       *RenderSummary
		want, not []string
		whole     string
	}{
		{sum: nil},
		{sum: &RenderSummary{Mode: "auto"}},
		{sum: &RenderSummary{Mode: "never", Off: "render: no Chromium found"}, whole: "off (render: no Chromium found): the crawl ran as --render never"},
		{sum: &RenderSummary{Mode: "always", Pages: 10, Requests: 89, Recalled: 70, NewLinks: 2, BrowserConns: 9, BrowserTargets: []string{"accounts.google.com:443", "update.googleapis.com:443"}},
			want: []string{"always: 10 pages rendered;", "89 browser requests through weft's fetch path (70 answered from the archive, 0 refused)", "2 new links",
				"9 of Chromium's own background connections (accounts.google.com:443, update.googleapis.com:443) refused, none of them left the machine"},
			not: []string{"fell back", "hosts no longer rendered", "page connections", "browsers replaced", "not fetched again"}},
		{sum: &RenderSummary{Mode: "auto", Pages: 3, Fallbacks: 1, Requests: 21, Spared: 6, HostsStopped: 1, Escapes: 1, Restarts: 1},
			want: []string{"3 pages rendered, 1 fell back to their static links", "6 requisites a render had fetched not fetched again", "1 hosts no longer rendered",
				"1 page connections outside interception (WebSockets) refused", "1 browsers replaced"},
			not: []string{"Chromium's own"}},
	} {
		got := c.sum.Line()
		if c.want == nil && got != c.whole {
			t.Errorf("%+v: %q, want %q", c.sum, got, c.whole)
		}
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%q lacks %q", got, w)
			}
		}
		for _, n := range c.not {
			if strings.Contains(got, n) {
				t.Errorf("%q says %q", got, n)
			}
		}
	}
}

// First counts every thing added and keeps the first MaxNamed, in order.
func TestFirstKeepsTheFirstNamed(t *testing.T) {
	var l First[string]
	for i := range MaxNamed + 5 {
		l.Add(strings.Repeat("h", i+1))
	}
	n, first := l.Snapshot()
	if n != MaxNamed+5 || len(first) != MaxNamed || first[0] != "h" || first[MaxNamed-1] != strings.Repeat("h", MaxNamed) {
		t.Errorf("count %d, kept %d: %q...", n, len(first), first[:2])
	}
	first[0] = "changed"
	if _, again := l.Snapshot(); again[0] != "h" {
		t.Error("the snapshot shares its slice with the list")
	}
}

// The summary says how many URLs were held past their family's trap
// budget, by reason, and how many of each trap host: held, not refused;
// and how many of them were released since.
func TestSummaryHeldPastTrapBudget(t *testing.T) {
	sum := Summary{
		Held: map[string]int64{judge.HeldQuery: 340, judge.HeldDate: 12},
		TrapCosts: []judge.TrapCost{
			{Host: "facets.test", Requests: 98, Refused: map[string]int64{}, Held: 340},
			{Host: "calendar.test", Requests: 70, Refused: map[string]int64{"pattern": 2}, Held: 12},
		},
		TrapHostCount: 2,
	}
	var out strings.Builder
	sum.Write(&out)
	for _, want := range []string{
		"held:       352 URLs held by the trap budget (a family past its budget; a shape of copies, of closed or missing pages, or of searches that led nowhere; a barren parameter), queued at the lowest priority: date-budget 12, query-budget 340\n",
		"facets.test                                  98 requests, 340 held past the trap budget\n",
		"calendar.test                                70 requests, 2 URLs refused: pattern 2, 12 held past the trap budget\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the summary lacks %q:\n%s", want, out.String())
		}
	}
	sum.Released = 40
	out.Reset()
	sum.Write(&out)
	if want := "query-budget 340; 40 held URLs queued as usual since, as their family's pages showed their worth\n"; !strings.Contains(out.String(), want) {
		t.Errorf("the summary lacks %q:\n%s", want, out.String())
	}
	out.Reset()
	(&Summary{Released: 7}).Write(&out) // held by an earlier run
	if want := "held:       0 URLs held by the trap budget (a family past its budget; a shape of copies, of closed or missing pages, or of searches that led nowhere; a barren parameter), queued at the lowest priority; 7 held URLs queued as usual since"; !strings.Contains(out.String(), want) {
		t.Errorf("the summary lacks %q:\n%s", want, out.String())
	}
	var none strings.Builder
	(&Summary{}).Write(&none)
	if strings.Contains(none.String(), "held") {
		t.Errorf("a summary with nothing held speaks of it:\n%s", none.String())
	}
}
