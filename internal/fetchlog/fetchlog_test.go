package fetchlog

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Every fetch is a JSON line in the file, the last ones come back newest
// first (the ring wraps without losing order), the outcomes are counted
// and each host's page has its fetches.
func TestLogWritesCountsAndKeepsTheLast(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fetches.jsonl")
	l, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	n := recentFetches + 7
	at := time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC)
	for i := range n {
		out := "ok"
		if i%10 == 0 {
			out = "error:timeout"
		}
		l.Write(Record{Time: at.Add(time.Duration(i) * time.Second), URL: "http://a.test/" + strconv.Itoa(i), Host: "a.test", Status: 200, Outcome: out})
	}
	last := l.Last()
	if len(last) != recentFetches || last[0].URL != "http://a.test/"+strconv.Itoa(n-1) || last[recentFetches-1].URL != "http://a.test/7" {
		t.Errorf("last: %d records, from %s to %s", len(last), last[0].URL, last[len(last)-1].URL)
	}
	if got := l.ByOutcome(); got["ok"] != int64(n-11) || got["error:timeout"] != 11 {
		t.Errorf("by outcome: %v", got)
	}
	if a, ok := l.Hosts().Of("a.test"); !ok || a.Fetched != int64(n) {
		t.Errorf("host a.test: %+v, %v", a, ok)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	lines := 0
	for sc := bufio.NewScanner(f); sc.Scan(); lines++ {
		var r Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil || r.URL != "http://a.test/"+strconv.Itoa(lines) {
			t.Fatalf("line %d: %q: %+v, %v", lines+1, sc.Text(), r, err)
		}
	}
	if lines != n {
		t.Errorf("%d lines, want %d", lines, n)
	}
}

// A log that cannot be opened names its file.
func TestOpenNamesTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "missing", "fetches.jsonl")
	if _, err := Open(path); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("err %v, want one naming %s", err, path)
	}
}

// With a crawl log, every record but a deferred URL's is a line of it
// too, in Heritrix's format, with Heritrix's code for a failure; a URL
// robots.txt precluded is a line of the crawl log only, not a fetch.
func TestCrawlLogHasEveryFetch(t *testing.T) {
	dir := t.TempDir()
	l, err := Open(filepath.Join(dir, "fetches.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if err := l.CrawlLog(filepath.Join(dir, "crawl.log")); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 12, 5, 1, 2, 3, 4e6, time.UTC)
	l.Write(Record{Time: at, URL: "http://a.test/", Host: "a.test", Status: 200, Bytes: 12, DurationMS: 7, Outcome: "ok",
		ContentType: "text/html; charset=utf-8", Worker: 3, SHA1: "sha1:7AJUMSDTOMT4FN7MBFGGNJU3Z56MLCMW", Truncated: "length"})
	l.Write(Record{Time: at, URL: "http://a.test/b", Host: "a.test", Status: 200, Outcome: "revisit", Path: "L", Via: "http://a.test/",
		SHA1: "sha1:7AJUMSDTOMT4FN7MBFGGNJU3Z56MLCMW", RevisitOf: "http://a.test/"})
	l.Write(Record{Time: at, URL: "http://b.test/", Host: "b.test", Outcome: "error:connect", Unsent: true, Path: "LL", Via: "http://a.test/b"})
	l.Write(Record{Time: at, URL: "http://c.test/", Host: "c.test", Outcome: "error:connect", Path: "LL", Via: "http://a.test/b"})
	l.Write(Record{Time: at, URL: "http://d.test/", Host: "d.test", Outcome: OutcomeDeferred})
	l.Write(Record{Time: at, URL: "http://e.test/", Host: "e.test", Status: 200, Outcome: "external"})
	l.Precluded(Record{URL: "http://a.test/private", Host: "a.test", Path: "L", Via: "http://a.test/"}, -9998)
	if got := l.ByOutcome(); got[OutcomeDeferred] != 1 || len(got) != 5 {
		t.Errorf("by outcome %v: a precluded URL is no fetch", got)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "crawl.log"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for s := range strings.Lines(string(data)) {
		f := strings.Fields(s)
		got = append(got, strings.Join(append(f[1:8:8], f[9:]...), " ")) // all but the times of logging and fetching
	}
	want := []string{
		"200 12 http://a.test/ - - text/html #003 sha1:7AJUMSDTOMT4FN7MBFGGNJU3Z56MLCMW - lenTrunc",
		"200 0 http://a.test/b L http://a.test/ unknown #000 sha1:7AJUMSDTOMT4FN7MBFGGNJU3Z56MLCMW - duplicate:uriAgnosticDigest",
		"-2 - http://b.test/ LL http://a.test/b unknown #000 - - -",
		"-3 - http://c.test/ LL http://a.test/b unknown #000 - - -",
		"200 - http://e.test/ - - unknown #000 - - -",
		"-9998 - http://a.test/private L http://a.test/ unknown #000 - - -",
	}
	if !slices.Equal(got, want) {
		t.Errorf("crawl log:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if !strings.Contains(string(data), " 20261205010203004+7 ") {
		t.Errorf("no fetch time and duration 20261205010203004+7 in\n%s", data)
	}
}
