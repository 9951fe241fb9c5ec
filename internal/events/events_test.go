package events

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// TestFileWritesWholeLines appends events from many goroutines at once and
// reads back one whole JSON line per event, with every field; a second
// open appends.
func TestFileWritesWholeLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	at := time.Date(2026, 12, 2, 1, 2, 3, 0, time.UTC)
	write := func(n int) {
		f, err := OpenFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				e := Event{URL: "http://a.test/" + strings.Repeat("x", i), FetchedAt: at, Status: 200,
					PayloadDigest: "sha1:ABC", WARCFile: "w.warc.gz", Offset: int64(i), Length: 10, Revisit: i%2 == 0, NearDupOf: "http://a.test/"}
				if err := f.Capture(e); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
	write(50)
	write(10)
	r, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	sc := bufio.NewScanner(r)
	lines := 0
	for sc.Scan() {
		var e Event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("line %d: %v: %q", lines+1, err, sc.Text())
		}
		i := int(e.Offset)
		if e.URL != "http://a.test/"+strings.Repeat("x", i) || !e.FetchedAt.Equal(at) || e.Revisit != (i%2 == 0) || e.NearDupOf == "" {
			t.Errorf("line %d: %+v", lines+1, e)
		}
		lines++
	}
	if lines != 60 {
		t.Errorf("%d lines, want 60", lines)
	}
}

// TestFileErrorNamesThePath opens a file in a directory that is not there.
func TestFileErrorNamesThePath(t *testing.T) {
	path := filepath.Join(t.TempDir(), "missing", "events.jsonl")
	if _, err := OpenFile(path); err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("OpenFile(%s) = %v, want an error naming it", path, err)
	}
}

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
