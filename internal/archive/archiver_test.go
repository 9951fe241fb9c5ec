package archive

import (
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/weft-crawler/weft/internal/canon"
	"github.com/weft-crawler/weft/internal/fetch"
	"github.com/weft-crawler/weft/internal/store"
	"github.com/weft-crawler/weft/internal/warc"
)

// TestCopiesReadWhereTheyCanFindMore drives the content-seen rule through
// the archive's own bookkeeping, batches pending and committed: a copy of a
// payload is read again only where its links can lead further than its
// first reading's. A payload with nothing to follow (an image) is read
// once, however shallow its later copies; a page copied nearer the seeds
// than its first reading is read there, one as deep or deeper is not.
func TestCopiesReadWhereTheyCanFindMore(t *testing.T) {
	dir := t.TempDir()
	db, err := store.Open(store.Dir(dir), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	w, err := warc.NewWriter(warc.Config{Dir: dir, Software: "weft/test"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	a := New(w, db, canon.New(canon.Config{}), NewOutbox(nil, db, slog.New(slog.DiscardHandler)), nil, false)
	// visit archives a 200 of body at url and depth, and reports whether
	// its links are read; commit says whether its batch commits before the
	// next visit.
	visit := func(url, body string, depth int, links, commit bool) bool {
		t.Helper()
		st := &Staging{Batch: db.NewBatch()}
		resp := &fetch.Response{
			URL: url, StatusCode: 200, Status: "200 OK", Proto: "HTTP/1.1", Header: http.Header{}, Body: []byte(body), Start: time.Now(), RemoteAddr: "127.0.0.1:80",
			RequestHeader:  []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"),
			ResponseHeader: []byte("HTTP/1.1 200 OK\r\n\r\n"),
		}
		cp, err := a.Archive(resp, st, nil)
		if err != nil || cp.Key == "" {
			t.Fatalf("%s not archived: %v", url, err)
		}
		read := !cp.SkipLinks(depth)
		if read {
			a.Followed(st, cp, depth, !links)
		}
		if commit {
			if err := st.Batch.Commit(false); err != nil {
				t.Fatal(err)
			}
			a.Settle(st)
		}
		return read
	}
	const img = "\xff\xd8\xff\xe0 the same image bytes"
	for i, step := range []struct {
		url   string
		depth int
		read  bool
	}{
		{"http://a.test/deep.jpg", 4, true},
		{"http://b.test/shallow.jpg", 1, false},
		{"http://c.test/seed.jpg", 0, false},
	} {
		if read := visit(step.url, img, step.depth, false, i != 0); read != step.read {
			t.Errorf("image copy %s at depth %d: read %v, want %v", step.url, step.depth, read, step.read)
		}
	}

	const page = `<html><body><a href="/next">next</a></body></html>`
	for _, step := range []struct {
		url    string
		depth  int
		read   bool
		commit bool
	}{
		{"http://a.test/p", 3, true, false},  // the first: read
		{"http://b.test/p", 3, false, false}, // same depth, its batch pending: not read
		{"http://c.test/p", 1, true, true},   // nearer the seeds: read
		{"http://d.test/p", 2, true, true},   // nearer than the first reading: read too
		{"http://e.test/p", 4, false, true},  // deeper: not read
		{"http://f.test/p", 0, true, true},
	} {
		if read := visit(step.url, page, step.depth, true, step.commit); read != step.read {
			t.Errorf("page copy %s at depth %d: read %v, want %v", step.url, step.depth, read, step.read)
		}
	}
}
