package crawl

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weft-crawler/weft/internal/version"
)

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
