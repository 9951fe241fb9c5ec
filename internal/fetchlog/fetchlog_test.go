package fetchlog

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
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
