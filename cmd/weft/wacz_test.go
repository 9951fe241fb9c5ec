package main

import (
	"archive/zip"
	"bufio"
	"encoding/json"
	"html"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/weft-crawler/weft/internal/synthweb"
	"github.com/weft-crawler/weft/internal/wacz"
)

// A crawl packaged as WACZ: every file datapackage.json lists is there,
// stored, with its size and digest; every line of the index points at a
// record of a WARC file inside the package, read by range as a replay
// does; pages.jsonl lists the HTML pages.
func TestWACZ(t *testing.T) {
	web, err := synthweb.Start(synthweb.Config{Seed: 23, Hosts: 2, PagesPerHost: 12, MinPageBytes: 12 << 10, MaxPageBytes: 16 << 10, MinLinks: 20, MaxLinks: 30,
		RobotsKinds: []synthweb.RobotsKind{synthweb.RobotsRules, synthweb.RobotsNotFound}})
	if err != nil {
		t.Fatal(err)
	}
	defer web.Close()
	data := filepath.Join(t.TempDir(), "data")
	args := []string{"crawl", "--data", data, "--delay", "2ms", "--workers", "4", "--allow-cidr", "127.0.0.0/8", "--warc-max-size", "100000"}
	for host, ip := range web.Resolve() {
		args = append(args, "--resolve", host+"="+ip)
	}
	if code, stdout, stderr := runWeft(t, append(args, web.Seeds()...)...); code != 0 {
		t.Fatalf("crawl: exit %d\n%s\n%s", code, stdout, stderr)
	}
	out := filepath.Join(t.TempDir(), "crawl.wacz")
	code, _, stderr := runWeft(t, "wacz", "--data", data, "-o", out)
	if code != 0 {
		t.Fatalf("wacz: exit %d: %s", code, stderr)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	paths, err := wacz.Check(f, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	warcs := 0
	for _, p := range paths {
		if strings.HasPrefix(p, "archive/") {
			warcs++
		}
	}
	if warcs < 2 {
		t.Errorf("%d WARC files packaged (%v), want the crawl's several", warcs, paths)
	}
	zr, err := zip.NewReader(f, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	entries := map[string]*zip.File{}
	for _, e := range zr.File {
		entries[e.Name] = e
	}
	open := func(name string) io.ReadCloser {
		rc, err := entries[name].Open()
		if err != nil {
			t.Fatal(err)
		}
		return rc
	}
	if captures := waczPayloads(t, out); len(captures) == 0 {
		t.Fatal("an empty index")
	}
	pg := open("pages/pages.jsonl")
	defer pg.Close()
	sc := bufio.NewScanner(pg)
	pages := map[string]bool{}
	titleRE := regexp.MustCompile(`<title>([^<]*)</title>`)
	for first := true; sc.Scan(); first = false {
		var p struct{ Format, URL, TS, Title string }
		if err := json.Unmarshal(sc.Bytes(), &p); err != nil {
			t.Fatalf("pages.jsonl: %v: %s", err, sc.Text())
		}
		if first != (p.Format == "json-pages-1.0") || (!first && (p.URL == "" || p.TS == "")) {
			t.Errorf("pages.jsonl line %q", sc.Text())
		}
		// Each page's title is the one its server wrote, as
		// document.title reads it.
		if m := titleRE.FindSubmatch(web.Body(p.URL)); !first && (m == nil || p.Title != strings.Join(strings.Fields(html.UnescapeString(string(m[1]))), " ")) {
			t.Errorf("pages.jsonl: %s has title %q; its page has %q", p.URL, p.Title, m)
		}
		pages[p.URL] = true
	}
	for _, s := range web.Seeds() {
		if !pages[s] {
			t.Errorf("seed %s not among the pages", s)
		}
	}
	if code, _, stderr := runWeft(t, "wacz", "--data", filepath.Join(t.TempDir(), "none"), "-o", out); code == 0 || !strings.Contains(stderr, "none") {
		t.Errorf("wacz of no crawl: exit %d, %s", code, stderr)
	}
}
