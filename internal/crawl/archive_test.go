package crawl

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weft-crawler/weft/internal/fetch"
	"github.com/weft-crawler/weft/internal/version"
)

// TestCopiesReadWhereTheyCanFindMore drives the content-seen rule through
// the archive's own bookkeeping, batches pending and committed: a copy of a
// payload is read again only where its links can lead further than its
// first reading's. A payload with nothing to follow (an image) is read
// once, however shallow its later copies; a page copied nearer the seeds
// than its first reading is read there, one as deep or deeper is not.
func TestCopiesReadWhereTheyCanFindMore(t *testing.T) {
	c, err := New(Config{Seeds: []string{"http://a.test/"}, DataDir: t.TempDir(), UserAgent: "weft/test (+https://example.org/weft-crawler)"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.close(0); err != nil {
			t.Error(err)
		}
	})
	// visit archives a 200 of body at url and depth, and reports whether
	// its links are read; commit says whether its batch commits before the
	// next visit.
	visit := func(url, body string, depth int, links, commit bool) (read bool, pb *pageBatch) {
		t.Helper()
		pb = c.state.newBatch()
		resp := &fetch.Response{
			URL: url, StatusCode: 200, Status: "200 OK", Proto: "HTTP/1.1", Header: http.Header{}, Body: []byte(body), Start: time.Now(), RemoteAddr: "127.0.0.1:80",
			RequestHeader:  []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"),
			ResponseHeader: []byte("HTTP/1.1 200 OK\r\n\r\n"),
		}
		cp := c.arch.archive(resp, pb, nil)
		if cp.key == "" {
			t.Fatalf("%s not archived", url)
		}
		if read = !cp.skipLinks(depth); read {
			c.arch.followed(pb, cp, depth, !links)
		}
		if commit {
			settle(t, c, pb)
		}
		return read, pb
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
		if read, _ := visit(step.url, img, step.depth, false, i != 0); read != step.read {
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
		if read, _ := visit(step.url, page, step.depth, true, step.commit); read != step.read {
			t.Errorf("page copy %s at depth %d: read %v, want %v", step.url, step.depth, read, step.read)
		}
	}
}

// settle commits pb as a worker does and forgets its pending digests.
func settle(t *testing.T, c *Crawler, pb *pageBatch) {
	t.Helper()
	if err := pb.b.Commit(false); err != nil {
		t.Fatal(err)
	}
	c.arch.settle(pb)
}

// TestWarcinfo crawls a small site and reads its WARC file back: the
// warcinfo names weft and its version as the software, the User-Agent the
// crawl sent and that it obeys robots.txt, as Heritrix's do; and it is
// dated no later than any record of its file, though the file was opened
// only when the first fetch ended. The site is one host, so its fetches
// (and their records) come one after the other.
func TestWarcinfo(t *testing.T) {
	mw := newMiniWeb(t, map[string]func(*miniWeb, http.ResponseWriter, *http.Request){
		"w.test": func(w *miniWeb, rw http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/":
				page(rw, "/a", "/b")
			case "/a", "/b":
				page(rw)
			default:
				http.NotFound(rw, r)
			}
		},
	})
	cfg := mw.config(t, 10*time.Millisecond, mw.url("w.test", "/"))
	sum := runCrawl(t, cfg)
	if len(sum.WARCFiles) != 1 {
		t.Fatalf("WARC files %v, want one", sum.WARCFiles)
	}
	recs := readWARC(t, filepath.Join(cfg.DataDir, "warc", sum.WARCFiles[0]))
	if len(recs) < 2 || recs[0].header.Get("WARC-Type") != "warcinfo" {
		t.Fatalf("%d records, the first not a warcinfo", len(recs))
	}
	fields := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(recs[0].block)), "\r\n") {
		name, value, _ := strings.Cut(line, ": ")
		fields[name] = value
	}
	for name, want := range map[string]string{
		"software":               "weft/" + version.Version,
		"http-header-user-agent": cfg.UserAgent,
		"robots":                 "obey",
		"format":                 "WARC File Format 1.1",
	} {
		if fields[name] != want {
			t.Errorf("warcinfo %s: %q, want %q", name, fields[name], want)
		}
	}
	info, err := time.Parse(time.RFC3339Nano, recs[0].header.Get("WARC-Date"))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs[1:] {
		d, err := time.Parse(time.RFC3339Nano, r.header.Get("WARC-Date"))
		if err != nil {
			t.Fatal(err)
		}
		if d.Before(info) {
			t.Errorf("%s record of %s dated %v, before the warcinfo's %v", r.header.Get("WARC-Type"), r.header.Get("WARC-Target-URI"), d, info)
		}
	}
}
