package warc

import (
	"bytes"
	"crypto/sha1"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"

	ia "github.com/internetarchive/gowarc"
	"github.com/internetarchive/gowarc/cmd/warc/verify"
	nlnwa "github.com/nlnwa/gowarc/v3"
	whatwg "github.com/nlnwa/whatwg-url/url"
	"go.uber.org/goleak"

	"github.com/weft-crawler/weft/internal/version"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// mixedExchanges returns exchanges covering the interesting cases: plain
// HTML pages, a gzip content-encoded page, an empty body, a truncated
// body, a body without Content-Length, IPv6, no IP.
func mixedExchanges(t testing.TB) []Exchange {
	var exs []Exchange
	for i := range 6 {
		exs = append(exs, pageExchange(fmt.Sprintf("http://example.com/page/%d.html", i), i, htmlPage(uint64(i), 20_000+7_000*i)))
	}

	gz := gzipBytes(t, htmlPage(99, 50_000))
	ex := pageExchange("http://example.com/gzipped.html", 6, gz)
	ex.ResponseHeader = []byte(fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Encoding: gzip\r\nContent-Length: %d\r\nVary: Accept-Encoding\r\n\r\n", len(gz)))
	exs = append(exs, ex)

	ex = pageExchange("http://example.com/moved", 7, nil)
	ex.ResponseHeader = []byte("HTTP/1.1 301 Moved Permanently\r\nLocation: http://example.com/new\r\nContent-Length: 0\r\n\r\n")
	exs = append(exs, ex)

	ex = pageExchange("http://example.com/no-content", 8, []byte{})
	ex.ResponseHeader = []byte("HTTP/1.1 204 No Content\r\nServer: test\r\n\r\n")
	exs = append(exs, ex)

	// Cut at our size limit: the HTTP message announces more than we have.
	big := htmlPage(100, 30_000)
	ex = pageExchange("http://example.com/huge.html", 9, big[:12_345])
	ex.ResponseHeader = []byte("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 30000000\r\n\r\n")
	ex.Truncated = "length"
	exs = append(exs, ex)

	// Originally chunked: the fetcher dropped Transfer-Encoding and stored
	// the de-chunked body; the body runs to the end of the block.
	p := htmlPage(101, 9_000)
	ex = pageExchange("http://example.com/chunked.html", 10, p)
	ex.ResponseHeader = []byte("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nConnection: close\r\n\r\n")
	exs = append(exs, ex)

	ex = pageExchange("http://example.com/v6.html", 11, htmlPage(102, 3_000))
	ex.IP = "2001:db8::17"
	exs = append(exs, ex)

	ex = pageExchange("http://example.com/noip.html?q=a%20b&x=1", 12, htmlPage(103, 1_000))
	ex.IP = ""
	exs = append(exs, ex)
	return exs
}

// TestWriteReadBack writes exchanges and reads them back with the
// independent internetarchive reader (and its verifier) and with nlnwa's
// strict reader.
func TestWriteReadBack(t *testing.T) {
	dir := t.TempDir()
	const ua = "weft/test (+https://example.org/weft-crawler)"
	w, err := NewWriter(Config{Dir: dir, Operator: "ops@example.org", Hostname: "crawler-7", UserAgent: ua, Robots: "obey"})
	if err != nil {
		t.Fatal(err)
	}
	exs := mixedExchanges(t)
	locs := make([]Location, len(exs))
	for i, ex := range exs {
		if locs[i], err = w.WriteExchange(ex); err != nil {
			t.Fatal(err)
		}
	}
	files := w.Files()
	if len(files) != 1 {
		t.Fatalf("Files() = %v, want one file", files)
	}
	if got := listDir(t, dir); len(got) != 1 || got[0] != files[0]+".open" {
		t.Fatalf("before Close the directory holds %v, want %s.open", got, files[0])
	}
	mustClose(t, w)
	if got := listDir(t, dir); len(got) != 1 || got[0] != files[0] {
		t.Fatalf("after Close the directory holds %v, want %s", got, files[0])
	}
	path := filepath.Join(dir, files[0])
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if w.Bytes() != st.Size() {
		t.Errorf("Bytes() = %d, file is %d bytes", w.Bytes(), st.Size())
	}

	recs := readIA(t, path)
	if len(recs) != 1+2*len(exs) {
		t.Fatalf("read %d records, want %d", len(recs), 1+2*len(exs))
	}

	info := recs[0]
	if info.Header.Get("WARC-Type") != "warcinfo" || info.Version != "WARC/1.1" {
		t.Fatalf("first record is %s %q, want WARC/1.1 warcinfo", info.Version, info.Header.Get("WARC-Type"))
	}
	if got := info.Header.Get("WARC-Filename"); got != files[0] {
		t.Errorf("WARC-Filename = %q, want %q", got, files[0])
	}
	if got := info.Header.Get("Content-Type"); got != "application/warc-fields" {
		t.Errorf("warcinfo Content-Type = %q", got)
	}
	for _, want := range []string{
		"software: weft/" + version.Version + "\r\n",
		"format: WARC File Format 1.1\r\n",
		"conformsTo: http://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/\r\n",
		"hostname: crawler-7\r\n",
		"operator: ops@example.org\r\n",
		"isPartOf: weft\r\n",
		"robots: obey\r\n",
		"http-header-user-agent: " + ua + "\r\n",
	} {
		if !bytes.Contains(info.Block, []byte(want)) {
			t.Errorf("warcinfo block lacks %q:\n%s", want, info.Block)
		}
	}

	for i, ex := range exs {
		req, resp := recs[1+2*i], recs[2+2*i]
		t.Run(ex.URL, func(t *testing.T) {
			checkResponse(t, resp, ex)
			checkRequest(t, req, resp, ex)
			if resp.Offset != locs[i].Offset || resp.Size != locs[i].Length || locs[i].File != files[0] {
				t.Errorf("reader found the response at %d+%d, WriteExchange said %+v", resp.Offset, resp.Size, locs[i])
			}
		})
	}

	// One gzip member per record, each decompressing to exactly one record.
	ms := gzipMembers(t, path)
	if len(ms) != len(recs) {
		t.Fatalf("%d gzip members for %d records", len(ms), len(recs))
	}
	for i, m := range ms {
		if m.Offset != recs[i].Offset || m.Length != recs[i].Size {
			t.Errorf("member %d at %d+%d, reader's record at %d+%d", i, m.Offset, m.Length, recs[i].Offset, recs[i].Size)
		}
		if got := readIAFrom(t, bytes.NewReader(m.Data), "member"); len(got) != 1 {
			t.Errorf("member %d holds %d records", i, len(got))
		}
		if n := warcHeaderCount(m.Data, "Content-Type"); n != 1 {
			t.Errorf("member %d has %d Content-Type fields", i, n)
		}
	}

	// nlnwa's strict reader checks field syntax and both digests itself.
	n, payloads := readNlnwaStrict(t, path)
	if n != len(recs) || len(payloads) != len(exs) {
		t.Fatalf("nlnwa read %d records and %d responses", n, len(payloads))
	}
	for i, ex := range exs {
		if !bytes.Equal(payloads[i], ex.Payload) {
			t.Errorf("%s: nlnwa's payload differs from Payload", ex.URL)
		}
	}

	// internetarchive's verifier reads the body with net/http, so it can
	// only fail the truncated record, whose HTTP message announces
	// 30,000,000 bytes: its body ends early.
	res, err := verify.ValidateWARCFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !res.AllRecordsRead || res.RecordCount != len(recs) || res.ErrorsCount != 1 {
		t.Errorf("internetarchive verify: %+v, want all %d records read and 1 error (the truncated one)", res, len(recs))
	}
}

func checkResponse(t *testing.T, resp iaRecord, ex Exchange) {
	t.Helper()
	h := resp.Header
	if h.Get("WARC-Type") != "response" {
		t.Fatalf("record is %q, want response", h.Get("WARC-Type"))
	}
	if got := h.Get("WARC-Target-URI"); got != ex.URL {
		t.Errorf("WARC-Target-URI = %q, want %q", got, ex.URL)
	}
	date, err := time.Parse(time.RFC3339Nano, h.Get("WARC-Date"))
	if err != nil {
		t.Errorf("WARC-Date %q: %v", h.Get("WARC-Date"), err)
	} else if want := ex.Date.Truncate(time.Microsecond); !date.Equal(want) {
		t.Errorf("WARC-Date = %v, want %v", date, want)
	}
	if !strings.Contains(h.Get("WARC-Date"), ".") {
		t.Errorf("WARC-Date %q has no fraction of a second", h.Get("WARC-Date"))
	}
	if got := h.Get("WARC-IP-Address"); got != ex.IP {
		t.Errorf("WARC-IP-Address = %q, want %q", got, ex.IP)
	}
	if got := h.Get("Content-Type"); got != "application/http;msgtype=response" {
		t.Errorf("Content-Type = %q", got)
	}
	if got := h.Get("WARC-Truncated"); got != ex.Truncated {
		t.Errorf("WARC-Truncated = %q, want %q", got, ex.Truncated)
	}
	if !regexp.MustCompile(`^<urn:uuid:[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}>$`).MatchString(h.Get("WARC-Record-ID")) {
		t.Errorf("WARC-Record-ID = %q, want a version 4 UUID URN in <>", h.Get("WARC-Record-ID"))
	}

	if got, want := h.Get("WARC-Block-Digest"), sha1Base32(resp.Block); got != want {
		t.Errorf("WARC-Block-Digest = %s, block hashes to %s", got, want)
	}
	if got, want := h.Get("WARC-Payload-Digest"), sha1Base32(ex.Payload); got != want {
		t.Errorf("WARC-Payload-Digest = %s, Payload hashes to %s", got, want)
	}
	// The internetarchive library's own digest function over the body.
	hdr, payload := splitBlock(t, resp.Block)
	if !bytes.Equal(hdr, ex.ResponseHeader) || !bytes.Equal(payload, ex.Payload) {
		t.Fatalf("block is not ResponseHeader+Payload")
	}
	d, err := ia.GetDigest(bytes.NewReader(payload), ia.SHA1)
	if err != nil || d != h.Get("WARC-Payload-Digest") {
		t.Errorf("ia.GetDigest(payload) = %s, %v; header has %s", d, err, h.Get("WARC-Payload-Digest"))
	}

	// The body as net/http reads it out of the block.
	body, err := httpBody(t, resp.Block)
	switch {
	case ex.Truncated != "":
		if !errors.Is(err, io.ErrUnexpectedEOF) || !bytes.Equal(body, ex.Payload) {
			t.Errorf("truncated body: read %d bytes, %v; want the %d stored bytes and an unexpected EOF", len(body), err, len(ex.Payload))
		}
	case err != nil:
		t.Errorf("reading body: %v", err)
	case !bytes.Equal(body, ex.Payload):
		t.Errorf("body read by net/http (%d bytes) differs from Payload (%d bytes)", len(body), len(ex.Payload))
	}
}

func checkRequest(t *testing.T, req, resp iaRecord, ex Exchange) {
	t.Helper()
	h := req.Header
	if h.Get("WARC-Type") != "request" {
		t.Fatalf("record before the response is %q, want request", h.Get("WARC-Type"))
	}
	if got, want := h.Get("WARC-Concurrent-To"), resp.Header.Get("WARC-Record-ID"); got != want || got == "" {
		t.Errorf("request WARC-Concurrent-To = %q, response id %q", got, want)
	}
	if h.Get("WARC-Record-ID") == resp.Header.Get("WARC-Record-ID") {
		t.Errorf("request and response share a record id")
	}
	if got := h.Get("Content-Type"); got != "application/http;msgtype=request" {
		t.Errorf("request Content-Type = %q", got)
	}
	if got := h.Get("WARC-Target-URI"); got != ex.URL {
		t.Errorf("request WARC-Target-URI = %q", got)
	}
	if !bytes.Equal(req.Block, ex.RequestHeader) {
		t.Errorf("request block = %q, want %q", req.Block, ex.RequestHeader)
	}
	if got, want := h.Get("WARC-Block-Digest"), sha1Base32(req.Block); got != want {
		t.Errorf("request WARC-Block-Digest = %s, want %s", got, want)
	}
}

// TestLocation reads each response by seeking to its Location and
// decompressing only Length bytes.
func TestLocation(t *testing.T) {
	dir := t.TempDir()
	w, err := NewWriter(Config{Dir: dir, MaxFileSize: 60_000})
	if err != nil {
		t.Fatal(err)
	}
	exs := mixedExchanges(t)
	locs := make([]Location, len(exs))
	for i, ex := range exs {
		if locs[i], err = w.WriteExchange(ex); err != nil {
			t.Fatal(err)
		}
	}
	mustClose(t, w)
	if len(w.Files()) < 2 {
		t.Fatalf("want several files, got %v", w.Files())
	}

	for i, ex := range exs {
		loc := locs[i]
		f, err := os.Open(filepath.Join(dir, loc.File))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Seek(loc.Offset, io.SeekStart); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, loc.Length)
		if _, err := io.ReadFull(f, buf); err != nil {
			t.Fatal(err)
		}
		f.Close()

		recs := readIAFrom(t, bytes.NewReader(buf), loc.File)
		if len(recs) != 1 {
			t.Fatalf("%s: %d records in %+v, want exactly one", ex.URL, len(recs), loc)
		}
		if recs[0].Size != loc.Length {
			t.Errorf("%s: the member is %d bytes, Location says %d", ex.URL, recs[0].Size, loc.Length)
		}
		if recs[0].Header.Get("WARC-Type") != "response" || recs[0].Header.Get("WARC-Target-URI") != ex.URL {
			t.Errorf("%s: found %s record for %s", ex.URL, recs[0].Header.Get("WARC-Type"), recs[0].Header.Get("WARC-Target-URI"))
		}
		if _, p := splitBlock(t, recs[0].Block); !bytes.Equal(p, ex.Payload) {
			t.Errorf("%s: payload differs", ex.URL)
		}
	}
}

var fileNameRE = regexp.MustCompile(`^weft-\d{14}-(\d{5})-[0-9a-f]{6}\.warc\.gz$`)

// TestRotation writes with a tiny MaxFileSize and checks every file.
func TestRotation(t *testing.T) {
	dir := t.TempDir()
	const maxSize = 8_000
	w, err := NewWriter(Config{Dir: dir, MaxFileSize: maxSize})
	if err != nil {
		t.Fatal(err)
	}
	const n = 40
	urls := map[string]bool{}
	for i := range n {
		url := fmt.Sprintf("http://example.com/r/%d", i)
		urls[url] = true
		if _, err := w.WriteExchange(pageExchange(url, i, htmlPage(uint64(i), 1_000+(i%7)*2_500))); err != nil {
			t.Fatal(err)
		}
		if i == n/2 {
			// Mid-crawl: earlier files are finished, only the last is open.
			files := w.Files()
			for _, f := range files[:len(files)-1] {
				if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
					t.Errorf("finished file: %v", err)
				}
			}
			if _, err := os.Stat(filepath.Join(dir, files[len(files)-1]+".open")); err != nil {
				t.Errorf("current file: %v", err)
			}
		}
	}
	mustClose(t, w)

	files := w.Files()
	if len(files) < 4 {
		t.Fatalf("%d files, want several", len(files))
	}
	if got := listDir(t, dir); strings.Join(got, " ") != strings.Join(files, " ") {
		t.Fatalf("directory holds %v, Files() = %v", got, files)
	}
	var total int64
	seen := 0
	for i, name := range files {
		m := fileNameRE.FindStringSubmatch(name)
		if m == nil || m[1] != fmt.Sprintf("%05d", i) {
			t.Errorf("file %d is named %q", i, name)
		}
		path := filepath.Join(dir, name)
		recs := readIA(t, path)
		if recs[0].Header.Get("WARC-Type") != "warcinfo" || recs[0].Header.Get("WARC-Filename") != name {
			t.Errorf("%s starts with %s %q", name, recs[0].Header.Get("WARC-Type"), recs[0].Header.Get("WARC-Filename"))
		}
		if (len(recs)-1)%2 != 0 || len(recs) < 3 {
			t.Fatalf("%s holds %d records: an exchange was split or a file is empty", name, len(recs))
		}
		for j := 1; j < len(recs); j += 2 {
			req, resp := recs[j], recs[j+1]
			if req.Header.Get("WARC-Type") != "request" || resp.Header.Get("WARC-Type") != "response" ||
				req.Header.Get("WARC-Concurrent-To") != resp.Header.Get("WARC-Record-ID") ||
				!urls[resp.Header.Get("WARC-Target-URI")] {
				t.Errorf("%s: records %d and %d are not one exchange", name, j, j+1)
			}
			delete(urls, resp.Header.Get("WARC-Target-URI"))
			seen++
		}
		st, _ := os.Stat(path)
		total += st.Size()
		if exchanges := (len(recs) - 1) / 2; st.Size() > maxSize && exchanges > 1 {
			t.Errorf("%s is %d bytes with %d exchanges: it should have rotated", name, st.Size(), exchanges)
		}
		if len(gzipMembers(t, path)) != len(recs) {
			t.Errorf("%s: members and records differ in number", name)
		}
		readNlnwaStrict(t, path)
		if res, err := verify.ValidateWARCFile(path); err != nil || !res.Valid || res.ErrorsCount != 0 || res.RecordCount != len(recs) {
			t.Errorf("%s: internetarchive verify: %+v, %v", name, res, err)
		}
	}
	if seen != n || len(urls) != 0 {
		t.Errorf("read %d exchanges, missing %v", seen, urls)
	}
	if total != w.Bytes() {
		t.Errorf("files total %d bytes, Bytes() = %d", total, w.Bytes())
	}
}

// TestConcurrent writes from 16 goroutines (run it with -race) across
// rotations and checks that every record is intact and in its place.
func TestConcurrent(t *testing.T) {
	dir := t.TempDir()
	w, err := NewWriter(Config{Dir: dir, MaxFileSize: 40_000})
	if err != nil {
		t.Fatal(err)
	}
	const workers, each = 16, 12
	pages := make([][]byte, 8)
	for i := range pages {
		pages[i] = htmlPage(uint64(i), 1_000+2_000*i)
	}
	var mu sync.Mutex
	locs := map[string]Location{}
	var wg sync.WaitGroup
	for g := range workers {
		wg.Go(func() {
			for i := range each {
				url := fmt.Sprintf("http://w%d.example.com/p/%d", g, i)
				loc, err := w.WriteExchange(pageExchange(url, i, pages[(g+i)%len(pages)]))
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				locs[url] = loc
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	mustClose(t, w)

	if len(w.Files()) < 2 {
		t.Errorf("want rotation during the test, got %v", w.Files())
	}
	found := 0
	for _, name := range w.Files() {
		recs := readIA(t, filepath.Join(dir, name))
		if ms := gzipMembers(t, filepath.Join(dir, name)); len(ms) != len(recs) {
			t.Fatalf("%s: %d gzip members for %d records", name, len(ms), len(recs))
		}
		for j := 1; j < len(recs); j += 2 {
			req, resp := recs[j], recs[j+1]
			url := resp.Header.Get("WARC-Target-URI")
			if req.Header.Get("WARC-Concurrent-To") != resp.Header.Get("WARC-Record-ID") || req.Header.Get("WARC-Target-URI") != url {
				t.Fatalf("%s: records %d, %d are not one exchange", name, j, j+1)
			}
			loc, ok := locs[url]
			if !ok || loc.File != name || loc.Offset != resp.Offset || loc.Length != resp.Size {
				t.Errorf("%s found in %s at %d+%d, WriteExchange said %+v", url, name, resp.Offset, resp.Size, loc)
			}
			var g, i int
			fmt.Sscanf(url, "http://w%d.example.com/p/%d", &g, &i)
			if _, p := splitBlock(t, resp.Block); !bytes.Equal(p, pages[(g+i)%len(pages)]) {
				t.Errorf("%s: payload differs", url)
			}
			if resp.Header.Get("WARC-Payload-Digest") != sha1Base32(pages[(g+i)%len(pages)]) {
				t.Errorf("%s: wrong payload digest", url)
			}
			found++
		}
	}
	if found != workers*each {
		t.Errorf("read %d exchanges, wrote %d", found, workers*each)
	}
}

// TestTwoWritersOneDir starts two writers in the same second in the same
// directory: their file names must not collide.
func TestTwoWritersOneDir(t *testing.T) {
	dir := t.TempDir()
	var ws []*Writer
	for range 2 {
		w, err := NewWriter(Config{Dir: dir})
		if err != nil {
			t.Fatal(err)
		}
		ws = append(ws, w)
	}
	for i, w := range ws {
		w.now = func() time.Time { return testDate }
		if _, err := w.WriteExchange(pageExchange("http://example.com/x", i, []byte("x"))); err != nil {
			t.Fatal(err)
		}
	}
	for _, w := range ws {
		mustClose(t, w)
	}
	if a, b := ws[0].Files()[0], ws[1].Files()[0]; a == b {
		t.Fatalf("both writers wrote %s", a)
	}
	if got := listDir(t, dir); len(got) != 2 {
		t.Fatalf("directory holds %v", got)
	}
}

// TestWarcinfoNotAfterItsRecords: a file is opened by the first record
// written to it, which was captured before (a fetch is written when it
// ends), so its warcinfo is dated by that record, not by the opening; one
// opened before its first record was captured keeps the opening time.
// Every record of every file is dated no earlier than the file's warcinfo.
func TestWarcinfoNotAfterItsRecords(t *testing.T) {
	dir := t.TempDir()
	w, err := NewWriter(Config{Dir: dir, MaxFileSize: 1}) // a file per call
	if err != nil {
		t.Fatal(err)
	}
	opened := testDate.Add(time.Minute) // the writer's clock: after the first fetches
	w.now = func() time.Time { return opened }
	early := pageExchange("http://example.com/a", 0, []byte("a"))
	loc, err := w.WriteExchange(early)
	if err != nil {
		t.Fatal(err)
	}
	// Its metadata, dated as its capture, in the next file.
	if _, err := w.WriteMetadata(Metadata{URL: early.URL, Date: early.Date, ConcurrentTo: loc.RecordID, Fields: [][2]string{{"outlink", "http://example.com/b"}}}); err != nil {
		t.Fatal(err)
	}
	late := pageExchange("http://example.com/c", 1, []byte("c"))
	late.Date = opened.Add(time.Second) // captured after the writer's clock says it is
	if _, err := w.WriteExchange(late); err != nil {
		t.Fatal(err)
	}
	mustClose(t, w)
	files := w.Files()
	if len(files) != 3 {
		t.Fatalf("wrote %v, want a file per call", files)
	}
	wantInfo := []time.Time{early.Date, early.Date, opened}
	for i, name := range files {
		recs := readIA(t, filepath.Join(dir, name))
		if len(recs) < 2 || recs[0].Header.Get("WARC-Type") != "warcinfo" {
			t.Fatalf("%s: %d records, the first not a warcinfo", name, len(recs))
		}
		info, err := time.Parse(time.RFC3339Nano, recs[0].Header.Get("WARC-Date"))
		if err != nil {
			t.Fatal(err)
		}
		if !info.Equal(wantInfo[i].Truncate(time.Microsecond)) {
			t.Errorf("%s: warcinfo dated %v, want %v", name, info, wantInfo[i])
		}
		for _, r := range recs[1:] {
			d, err := time.Parse(time.RFC3339Nano, r.Header.Get("WARC-Date"))
			if err != nil {
				t.Fatal(err)
			}
			if d.Before(info) {
				t.Errorf("%s: %s record dated %v, before its warcinfo's %v", name, r.Header.Get("WARC-Type"), d, info)
			}
		}
	}
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		cfg   Config
		field string
	}{
		{Config{}, "Dir"},
		{Config{Dir: "d", Prefix: "a/b"}, "Prefix"},
		{Config{Dir: "d", Prefix: ".."}, "Prefix"},
		{Config{Dir: "d", Prefix: "a\nb"}, "Prefix"},
		{Config{Dir: "d", MaxFileSize: -1}, "MaxFileSize"},
		{Config{Dir: "d", CompressionLevel: 10}, "CompressionLevel"},
		{Config{Dir: "d", CompressionLevel: -2}, "CompressionLevel"},
		{Config{Dir: "d", Software: "weft\r\nx: y"}, "Software"},
		{Config{Dir: "d", Operator: "a\nb"}, "Operator"},
		{Config{Dir: "d", Hostname: "h\r"}, "Hostname"},
		{Config{Dir: "d", UserAgent: "weft/1\r\nx: y"}, "UserAgent"},
		{Config{Dir: "d", Robots: "obey\n"}, "Robots"},
	} {
		err := tc.cfg.Validate()
		if err == nil || !strings.Contains(err.Error(), "Config."+tc.field) {
			t.Errorf("Validate(%+v) = %v, want an error naming %s", tc.cfg, err, tc.field)
		}
		if _, err := NewWriter(tc.cfg); err == nil {
			t.Errorf("NewWriter(%+v) succeeded", tc.cfg)
		}
	}
	for _, cfg := range []Config{
		{Dir: "d"},
		{Dir: "d", Prefix: "crawl-1", MaxFileSize: 1, CompressionLevel: -1},
		{Dir: "d", CompressionLevel: 9, Operator: "ops@example.org"},
	} {
		if err := cfg.Validate(); err != nil {
			t.Errorf("Validate(%+v) = %v", cfg, err)
		}
	}
}

// TestRejectExchange checks that malformed exchanges are refused before
// anything is written.
func TestRejectExchange(t *testing.T) {
	dir := t.TempDir()
	w, err := NewWriter(Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	good := pageExchange("http://example.com/a", 0, []byte("hello"))
	for _, tc := range []struct {
		name string
		edit func(*Exchange)
		want string
	}{
		{"empty URL", func(e *Exchange) { e.URL = "" }, "empty URL"},
		{"CRLF in URL", func(e *Exchange) { e.URL = "http://example.com/\r\nWARC-Type: x" }, "control"},
		{"space in URL", func(e *Exchange) { e.URL = "http://example.com/a b" }, "space"},
		{"relative URL", func(e *Exchange) { e.URL = "/a/b" }, "absolute"},
		{"no scheme", func(e *Exchange) { e.URL = "0:a" }, "absolute"},
		{"zero date", func(e *Exchange) { e.Date = time.Time{} }, "Date"},
		{"IP with port", func(e *Exchange) { e.IP = "192.0.2.1:80" }, "IP"},
		{"IP with zone", func(e *Exchange) { e.IP = "fe80::1%eth0" }, "IP"},
		{"bad truncated", func(e *Exchange) { e.Truncated = "yes" }, "Truncated"},
		{"no request", func(e *Exchange) { e.RequestHeader = nil }, "RequestHeader"},
		{"no request line", func(e *Exchange) { e.RequestHeader = []byte("\r\n") }, "request line"},
		{"unterminated request", func(e *Exchange) { e.RequestHeader = []byte("GET / HTTP/1.1\r\nHost: a\r\n") }, "RequestHeader"},
		{"no status line", func(e *Exchange) { e.ResponseHeader = []byte("Content-Length: 5\r\n\r\n") }, "status line"},
		{"early blank line", func(e *Exchange) {
			e.ResponseHeader = []byte("HTTP/1.1 200 OK\r\n\r\nContent-Length: 5\r\n\r\n")
		}, "blank line"},
		{"chunked", func(e *Exchange) {
			e.ResponseHeader = []byte("HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n")
		}, "Transfer-Encoding"},
		{"chunked, space before colon", func(e *Exchange) {
			e.ResponseHeader = []byte("HTTP/1.1 200 OK\r\nX-A: 1\r\nTRANSFER-ENCODING :chunked\r\n\r\n")
		}, "Transfer-Encoding"},
	} {
		ex := good
		tc.edit(&ex)
		_, err := w.WriteExchange(ex)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: WriteExchange = %v, want an error about %s", tc.name, err, tc.want)
		}
	}
	if len(w.Files()) != 0 || w.Bytes() != 0 {
		t.Errorf("rejected exchanges wrote %v, %d bytes", w.Files(), w.Bytes())
	}
	// LF-only header lines, as some servers send, are accepted, and so are
	// fields that merely start with "Transfer-Encoding".
	lf := good
	lf.ResponseHeader = []byte("HTTP/1.1 200 OK\nTransfer-Encodings: x\nContent-Length: 5\n\n")
	if _, err := w.WriteExchange(lf); err != nil {
		t.Errorf("LF-only header: %v", err)
	}
	mustClose(t, w)
	recs := readIA(t, filepath.Join(dir, w.Files()[0]))
	if body, err := httpBody(t, recs[2].Block); err != nil || string(body) != "hello" {
		t.Errorf("LF-only header: body %q, %v", body, err)
	}
}

func TestClose(t *testing.T) {
	dir := t.TempDir()
	w, err := NewWriter(Config{Dir: filepath.Join(dir, "new", "sub")})
	if err != nil {
		t.Fatal(err)
	}
	mustClose(t, w) // never written: no file
	if got := listDir(t, filepath.Join(dir, "new", "sub")); len(got) != 0 {
		t.Errorf("unused writer left %v", got)
	}
	if _, err := w.WriteExchange(pageExchange("http://example.com/a", 0, nil)); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("WriteExchange after Close = %v", err)
	}
	mustClose(t, w)
}

// TestWriteError makes the file unwritable mid-crawl and checks that the
// error names the file and that the file still ends on a record boundary.
func TestWriteError(t *testing.T) {
	dir := t.TempDir()
	w, err := NewWriter(Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.WriteExchange(pageExchange("http://example.com/1", 1, htmlPage(1, 5000))); err != nil {
		t.Fatal(err)
	}
	name := w.Files()[0]
	w.mu.Lock()
	good := w.file
	ro, err := os.Open(good.Name()) // read-only: writes fail
	if err != nil {
		t.Fatal(err)
	}
	w.file = ro
	w.mu.Unlock()
	_, err = w.WriteExchange(pageExchange("http://example.com/2", 2, htmlPage(2, 5000)))
	if err == nil || !strings.Contains(err.Error(), name) || !strings.Contains(err.Error(), "http://example.com/2") {
		t.Errorf("write to a read-only file: %v, want an error naming %s and the URL", err, name)
	}
	w.mu.Lock()
	w.file = good
	w.mu.Unlock()
	ro.Close()
	if _, err := w.WriteExchange(pageExchange("http://example.com/3", 3, htmlPage(3, 5000))); err != nil {
		t.Fatal(err)
	}
	mustClose(t, w)
	recs := readIA(t, filepath.Join(dir, name))
	if len(recs) != 5 || recs[4].Header.Get("WARC-Target-URI") != "http://example.com/3" {
		t.Errorf("after a failed write the file holds %d records", len(recs))
	}
}

// FuzzExchange checks that any exchange WriteExchange accepts is read back
// by both readers with its payload and digests intact. Garbage HTTP
// headers are archived as received, so nlnwa's reader is strict about the
// WARC record and digests here but not about the HTTP message.
func FuzzExchange(f *testing.F) {
	f.Add("http://example.com/", []byte("GET / HTTP/1.1\r\nHost: example.com\r\n\r\n"), []byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n"), []byte("hi"), "")
	f.Add("http://a/b", []byte("GET /b HTTP/1.0\n\n"), []byte("HTTP/1.0 404 Not Found\n\n"), []byte("\r\n\r\nWARC/1.1\r\n"), "time")
	f.Add("https://x.test/?q=1", []byte("GET /?q=1 HTTP/1.1\r\nHost: x.test\r\n\r\n"), []byte("HTTP/1.1 200 OK\r\nX-A: b\r\n\r\n"), []byte{0x1f, 0x8b, 0, 0}, "disconnect")
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, url string, reqHdr, respHdr, payload []byte, truncated string) {
		if _, err := whatwg.NewParser().Parse(url); err != nil {
			t.Skip("URL validity is the caller's contract; nlnwa's reader checks it with this parser")
		}
		w, err := NewWriter(Config{Dir: dir})
		if err != nil {
			t.Fatal(err)
		}
		ex := Exchange{URL: url, Date: testDate, IP: "192.0.2.1", RequestHeader: reqHdr, ResponseHeader: respHdr, Payload: payload, Truncated: truncated}
		loc, err := w.WriteExchange(ex)
		mustClose(t, w)
		if err != nil {
			return
		}
		path := filepath.Join(dir, loc.File)
		defer os.Remove(path)
		recs := readIA(t, path)
		if len(recs) != 3 {
			t.Fatalf("%d records", len(recs))
		}
		resp := recs[2]
		if !bytes.Equal(resp.Block, append(append([]byte(nil), respHdr...), payload...)) {
			t.Fatalf("response block differs")
		}
		if resp.Header.Get("WARC-Payload-Digest") != sha1Base32(payload) || resp.Header.Get("WARC-Target-URI") != url {
			t.Fatalf("response header wrong: %v", resp.Header)
		}
		if !bytes.Equal(recs[1].Block, reqHdr) {
			t.Fatalf("request block differs")
		}
		_, payloads := readNlnwa(t, path, nlnwa.WithStrictValidation())
		if len(payloads) != 1 || !bytes.Equal(payloads[0], payload) {
			t.Fatalf("nlnwa sees a different payload")
		}
	})
}

// TestRevisit writes a page and then the same payload under two other URLs
// as revisit records: they hold the response headers only, the original's
// payload digest and a reference to it, and both independent readers accept
// the file, nlnwa's with strict validation of every digest.
func TestRevisit(t *testing.T) {
	dir := t.TempDir()
	w, err := NewWriter(Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	body := htmlPage(7, 12_000)
	orig := pageExchange("http://example.com/a.html", 0, body)
	origLoc, err := w.WriteExchange(orig)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha1.Sum(body)
	var locs []Location
	for i, u := range []string{"http://example.com/b.html", "http://mirror.example.org/a.html"} {
		ex := pageExchange(u, 1+i, body)
		ex.Revisit = &Revisit{RefersToURI: orig.URL, RefersToDate: orig.Date, RefersTo: origLoc.RecordID}
		if i == 1 {
			ex.PayloadSHA1 = &sum // as the crawler passes it
			ex.Revisit.Profile = ProfileServerNotModified
		}
		loc, err := w.WriteExchange(ex)
		if err != nil {
			t.Fatal(err)
		}
		locs = append(locs, loc)
	}
	mustClose(t, w)
	path := filepath.Join(dir, w.Files()[0])
	if n, payloads := readNlnwaStrict(t, path); n != 7 || len(payloads) != 1 {
		t.Fatalf("nlnwa read %d records and %d response payloads; want 7 and 1", n, len(payloads))
	}
	recs := readIA(t, path)
	for i, loc := range locs {
		rec := recs[4+2*i]
		h := rec.Header
		profile := []string{ProfileIdenticalPayload, ProfileServerNotModified}[i]
		if h.Get("WARC-Type") != "revisit" || h.Get("WARC-Profile") != profile ||
			h.Get("WARC-Refers-To-Target-URI") != orig.URL || h.Get("WARC-Refers-To-Date") != orig.Date.UTC().Format("2006-01-02T15:04:05.000000Z") ||
			h.Get("WARC-Payload-Digest") != sha1Base32(body) || h.Get("WARC-Refers-To") != origLoc.RecordID || recs[2].Header.Get("WARC-Record-ID") != origLoc.RecordID {
			t.Errorf("revisit %d: header %v", i, h)
		}
		if hdr, p := splitBlock(t, rec.Block); len(p) != 0 || !bytes.HasPrefix(hdr, []byte("HTTP/1.1 200")) {
			t.Errorf("revisit %d: block holds %d payload bytes; want the header block only", i, len(p))
		}
		if rec.Offset != loc.Offset || rec.Size != loc.Length {
			t.Errorf("revisit %d at %d+%d, Location says %d+%d", i, rec.Offset, rec.Size, loc.Offset, loc.Length)
		}
	}
	if recs[2].Header.Get("WARC-Type") != "response" || recs[2].Offset != origLoc.Offset {
		t.Errorf("the original is %s at %d", recs[2].Header.Get("WARC-Type"), recs[2].Offset)
	}

	// What cannot be a revisit is refused.
	w, err = NewWriter(Config{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer mustClose(t, w)
	for _, bad := range []Revisit{{RefersToURI: "", RefersToDate: orig.Date}, {RefersToURI: "a.html", RefersToDate: orig.Date}, {RefersToURI: orig.URL},
		{RefersToURI: orig.URL, RefersToDate: orig.Date, Profile: "http://netpreserve.org/warc/1.1/revisit/something-else"}} {
		ex := pageExchange("http://example.com/c.html", 3, body)
		ex.Revisit = &bad
		if _, err := w.WriteExchange(ex); err == nil {
			t.Errorf("revisit %+v accepted", bad)
		}
	}
	ex := pageExchange("http://example.com/c.html", 3, body[:100])
	ex.Truncated, ex.Revisit = "length", &Revisit{RefersToURI: orig.URL, RefersToDate: orig.Date}
	if _, err := w.WriteExchange(ex); err == nil {
		t.Error("a truncated revisit accepted")
	}
}

// TestReadRecord reads back, by Location, a response and a revisit, and
// refuses a corrupted record.
func TestReadRecord(t *testing.T) {
	dir := t.TempDir()
	w, err := NewWriter(Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	body := htmlPage(9, 8_000)
	orig := pageExchange("http://example.com/a.html", 0, body)
	oloc, err := w.WriteExchange(orig)
	if err != nil {
		t.Fatal(err)
	}
	rv := pageExchange("http://example.com/b.html", 1, body)
	rv.Revisit = &Revisit{RefersToURI: orig.URL, RefersToDate: orig.Date}
	rloc, err := w.WriteExchange(rv)
	if err != nil {
		t.Fatal(err)
	}
	cut := pageExchange("http://example.com/c.html", 2, body[:1000])
	cut.Truncated = "length"
	cloc, err := w.WriteExchange(cut)
	if err != nil {
		t.Fatal(err)
	}
	mustClose(t, w)
	path := filepath.Join(dir, oloc.File)
	got, err := ReadRecord(path, oloc.Offset)
	if err != nil {
		t.Fatal(err)
	}
	if got.Type != "response" || got.TargetURI != orig.URL || !bytes.Equal(got.Payload, body) || !bytes.Equal(got.ResponseHeader, orig.ResponseHeader) || got.Truncated != "" {
		t.Errorf("response read back as %s %s, %d payload bytes, header %q, truncated %q", got.Type, got.TargetURI, len(got.Payload), got.ResponseHeader, got.Truncated)
	}
	if got, err := ReadRecord(path, cloc.Offset); err != nil || got.Truncated != "length" {
		t.Errorf("a body cut at a cap read back as truncated %q (%v)", got.Truncated, err)
	}
	got, err = ReadRecord(path, rloc.Offset)
	if err != nil {
		t.Fatal(err)
	}
	if got.Type != "revisit" || got.RefersToURI != orig.URL || len(got.Payload) != 0 || got.PayloadDigest != sha1Base32(body) {
		t.Errorf("revisit read back as %+v", got)
	}
	if _, err := ReadRecord(path, 0); err == nil {
		t.Error("the warcinfo record was read as a response")
	}
	// Flip a payload byte: the record no longer matches its digest.
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	member := gunzip(t, data[oloc.Offset:oloc.Offset+oloc.Length])
	i := bytes.LastIndex(member, []byte("</html>"))
	member[i] = '#'
	bad := filepath.Join(t.TempDir(), "bad.warc.gz")
	if err := os.WriteFile(bad, gzipBytes(t, member), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadRecord(bad, 0); err == nil || !strings.Contains(err.Error(), "digest") {
		t.Errorf("a corrupted record: %v", err)
	}
}

func gunzip(t *testing.T, b []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestMetadata writes a page and a metadata record about it, with its
// outlinks, as Heritrix does: nlnwa's strict reader accepts both, and the
// metadata names the response's record ID.
func TestMetadata(t *testing.T) {
	dir := t.TempDir()
	w, err := NewWriter(Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	ex := pageExchange("http://example.com/a.html", 0, htmlPage(3, 5_000))
	loc, err := w.WriteExchange(ex)
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^<urn:uuid:[0-9a-f-]{36}>$`).MatchString(loc.RecordID) {
		t.Fatalf("RecordID %q", loc.RecordID)
	}
	m := Metadata{URL: ex.URL, Date: ex.Date, ConcurrentTo: loc.RecordID, Fields: [][2]string{
		{"via", "http://example.com/"}, {"outlink", "http://example.com/b.html"}, {"outlink", "http://other.example/"},
	}}
	mloc, err := w.WriteMetadata(m)
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []Metadata{
		{URL: "a.html", Date: ex.Date},
		{URL: ex.URL},
		{URL: ex.URL, Date: ex.Date, ConcurrentTo: "urn:uuid:x"},
		{URL: ex.URL, Date: ex.Date, Fields: [][2]string{{"outlink", "http://x/\r\nWARC-Type: response"}}},
		{URL: ex.URL, Date: ex.Date, Fields: [][2]string{{"out link", "x"}}},
	} {
		if _, err := w.WriteMetadata(bad); err == nil {
			t.Errorf("metadata %+v accepted", bad)
		}
	}
	mustClose(t, w)
	path := filepath.Join(dir, loc.File)
	if n, _ := readNlnwaStrict(t, path); n != 4 {
		t.Fatalf("nlnwa read %d records, want warcinfo, request, response and metadata", n)
	}
	recs := readIA(t, path)
	md := recs[3]
	if md.Header.Get("WARC-Type") != "metadata" || md.Header.Get("WARC-Concurrent-To") != loc.RecordID || recs[2].Header.Get("WARC-Record-ID") != loc.RecordID ||
		md.Offset != mloc.Offset || md.Size != mloc.Length {
		t.Errorf("metadata record %v at %d+%d (Location %+v)", md.Header, md.Offset, md.Size, mloc)
	}
	if want := "via: http://example.com/\r\noutlink: http://example.com/b.html\r\noutlink: http://other.example/\r\n"; string(md.Block) != want {
		t.Errorf("metadata block %q, want %q", md.Block, want)
	}
}

// TestOnFinishAndReadFrom: OnFinish hears of every file once it is
// finished, by rotation or by Close, in order, each complete under its
// final name when it does; and a record's byte range alone, as an object
// store returns it, reads back with ReadRecordFrom.
func TestOnFinishAndReadFrom(t *testing.T) {
	dir := t.TempDir()
	var (
		mu       sync.Mutex
		finished []string
	)
	w, err := NewWriter(Config{Dir: dir, MaxFileSize: 60_000, OnFinish: func(name string) {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("OnFinish(%s) before the file is in place: %v", name, err)
		}
		mu.Lock()
		finished = append(finished, name)
		mu.Unlock()
	}})
	if err != nil {
		t.Fatal(err)
	}
	exs := mixedExchanges(t)
	locs := make([]Location, len(exs))
	for i, ex := range exs {
		if locs[i], err = w.WriteExchange(ex); err != nil {
			t.Fatal(err)
		}
	}
	mustClose(t, w)
	if !slices.Equal(finished, w.Files()) || len(finished) < 2 {
		t.Fatalf("OnFinish heard of %v, the writer wrote %v", finished, w.Files())
	}
	for i, ex := range exs {
		b, err := os.ReadFile(filepath.Join(dir, locs[i].File))
		if err != nil {
			t.Fatal(err)
		}
		rec, err := ReadRecordFrom(bytes.NewReader(b[locs[i].Offset:locs[i].Offset+locs[i].Length]), locs[i].File, locs[i].Offset)
		if err != nil || !bytes.Equal(rec.Payload, ex.Payload) || rec.TargetURI != ex.URL {
			t.Errorf("%s: %v, %d payload bytes", ex.URL, err, len(rec.Payload))
		}
	}
}

// TestMetadataOneAfterAnother writes metadata records of falling and
// rising sizes one after another, as one encoder's reused block buffer
// sees them, and reads every block back exactly, with both readers.
func TestMetadataOneAfterAnother(t *testing.T) {
	dir := t.TempDir()
	w, err := NewWriter(Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	date := testDate
	var want []string
	for _, n := range []int{120, 3, 0, 60, 1, 200} {
		m := Metadata{URL: fmt.Sprintf("http://example.com/%d.html", n), Date: date}
		var block strings.Builder
		for i := range n {
			u := fmt.Sprintf("http://example.com/p/%d/%d?x=%d", n, i, i*i)
			m.Fields = append(m.Fields, [2]string{"outlink", u})
			block.WriteString("outlink: " + u + "\r\n")
		}
		if _, err := w.WriteMetadata(m); err != nil {
			t.Fatal(err)
		}
		want = append(want, block.String())
	}
	mustClose(t, w)
	path := filepath.Join(dir, w.Files()[0])
	if n, _ := readNlnwaStrict(t, path); n != 1+len(want) {
		t.Fatalf("nlnwa read %d records, want %d", n, 1+len(want))
	}
	recs := readIA(t, path)
	for i, b := range want {
		if got := string(recs[1+i].Block); got != b {
			t.Errorf("record %d: block %q, want %q", i, got, b)
		}
	}
}

// Records are read back in parallel (a browser's requests answered from
// the archive, a replay's): under -race, the library's reader must not be
// built by two goroutines at once.
func TestReadRecordInParallel(t *testing.T) {
	dir := t.TempDir()
	w, err := NewWriter(Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	body := htmlPage(3, 2_000)
	loc, err := w.WriteExchange(pageExchange("http://example.com/a.html", 0, body))
	if err != nil {
		t.Fatal(err)
	}
	mustClose(t, w)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			got, err := ReadRecord(filepath.Join(dir, loc.File), loc.Offset)
			if err != nil || !bytes.Equal(got.Payload, body) {
				t.Errorf("read back %d bytes: %v", len(got.Payload), err)
			}
		})
	}
	wg.Wait()
}

// TestStoredResponse parses a record's HTTP header block, and names what
// is wrong with one that is not.
func TestStoredResponse(t *testing.T) {
	st := Stored{ResponseHeader: []byte("HTTP/1.1 404 Not Found\r\nContent-Type: text/html\r\nX-A: 1\r\nX-A: 2\r\n")}
	status, h, err := st.Response()
	if err != nil || status != 404 || h.Get("Content-Type") != "text/html" || len(h.Values("X-A")) != 2 {
		t.Fatalf("Response() = %d, %v, %v", status, h, err)
	}
	for _, bad := range []string{"", "HTTP/1.1\r\n", "ICY 200 OK\r\n", "HTTP/1.1 2000 OK\r\n", "HTTP/1.1 200 OK\r\nno colon\r\n"} {
		if status, _, err := (Stored{ResponseHeader: []byte(bad)}).Response(); err == nil {
			t.Errorf("Response() of %q = %d, no error", bad, status)
		}
	}
}
