package archive

import (
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base32"
	"encoding/hex"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weft-crawler/weft/internal/canon"
	"github.com/weft-crawler/weft/internal/fetch"
	"github.com/weft-crawler/weft/internal/store"
	"github.com/weft-crawler/weft/internal/warc"
)

func TestParseIndexLine(t *testing.T) {
	p := []byte("a payload")
	s1, s256 := sha1.Sum(p), sha256.Sum256(p)
	b32 := base32.StdEncoding.EncodeToString(s1[:])
	h256 := hex.EncodeToString(s256[:])
	day := time.Date(2026, 11, 30, 10, 20, 30, 0, time.UTC)
	for _, tc := range []struct {
		line string
		sum  []byte // nil: skipped
		date time.Time
		err  string
	}{
		// weft cdx's own line.
		{`test,a)/x 20261130102030 {"url":"http://a.test/x","mime":"text/html","status":"200","digest":"sha1:` + b32 + `","length":"10","offset":"0","filename":"f.warc.gz"}`, s1[:], day, ""},
		// Browsertrix and wabac.js: SHA-256 in hex, numbers as numbers, a fraction of a second.
		{`test,a)/x 20261130102030123 {"url":"http://a.test/x","mime":"text/html","status":200,"digest":"sha256:` + h256 + `","length":10,"offset":0,"filename":"f.warc.gz"}`, s256[:], day.Add(123 * time.Millisecond), ""},
		// A classic 11-field CDX line, its digest base32 with no algorithm.
		{`test,a)/x 20261130102030 http://a.test/x text/html 200 ` + b32 + ` - - 10 0 f.warc.gz`, s1[:], day, ""},
		{` CDX N b a m s k r M S V g`, nil, time.Time{}, ""},
		{``, nil, time.Time{}, ""},
		{`test,a)/x 20261130102030 {"url":"http://a.test/x","mime":"warc/revisit","status":"200","digest":"sha1:` + b32 + `"}`, nil, day, ""},
		{`test,a)/x 20261130102030 {"url":"http://a.test/x","status":"404","digest":"sha1:` + b32 + `"}`, nil, day, ""},
		{`test,a)/x 20261130102030 {"url":"http://a.test/x","status":"200","digest":"md5:abc"}`, nil, day, ""},
		{`test,a)/x 20261130102030 {"url":"http://a.test/x","status":"200"`, nil, time.Time{}, "JSON"},
		{`test,a)/x {"url":"http://a.test/x"}`, nil, time.Time{}, "<timestamp>"},
		{`test,a)/x 2026-11-30 {"url":"http://a.test/x","digest":"sha1:` + b32 + `"}`, nil, time.Time{}, "timestamp"},
		{`test,a)/x 20261130102030 {"status":"200","digest":"sha1:` + b32 + `"}`, nil, time.Time{}, `no "url"`},
		{`test,a)/x 20261130102030 {"url":"http://a.test/x","status":"200","digest":"sha1:not base32"}`, nil, time.Time{}, "SHA-1"},
		{`just some words`, nil, time.Time{}, "neither CDXJ"},
	} {
		c, ok, err := parseIndexLine([]byte(tc.line))
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: error %v, want one saying %q", tc.line, err, tc.err)
			}
		case err != nil:
			t.Errorf("%q: %v", tc.line, err)
		case ok != (tc.sum != nil) || !bytes.Equal(c.sum, tc.sum):
			t.Errorf("%q: %x, %v; want %x", tc.line, c.sum, ok, tc.sum)
		case ok && (!c.date.Equal(tc.date) || c.url != "http://a.test/x"):
			t.Errorf("%q: %s at %v, want http://a.test/x at %v", tc.line, c.url, c.date, tc.date)
		}
	}
}

func TestImportBadInput(t *testing.T) {
	dir := t.TempDir()
	db := openStore(t)
	bad := filepath.Join(dir, "bad.cdxj")
	os.WriteFile(bad, []byte("test,a)/ 20261130102030 {\"url\":\"http://a.test/\",\"status\":\"200\",\"digest\":\"sha1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\"}\ntest,a)/b 20261130 {\"url\":\n"), 0o644)
	noIndex := filepath.Join(dir, "empty.wacz")
	writeZip(t, noIndex, map[string][]byte{"datapackage.json": []byte("{}")})
	badInWACZ := filepath.Join(dir, "bad.wacz")
	writeZip(t, badInWACZ, map[string][]byte{"indexes/index.cdxj": []byte("\n\nnot a line\n")})
	notData := filepath.Join(dir, "notdata")
	os.Mkdir(notData, 0o755)
	for _, tc := range []struct {
		src  string
		want []string
	}{
		{filepath.Join(dir, "missing.cdxj"), []string{"missing.cdxj", "no such file"}},
		{bad, []string{bad, "line 2", "JSON"}},
		{noIndex, []string{noIndex, "no index"}},
		{badInWACZ, []string{badInWACZ + "!indexes/index.cdxj", "line 3"}},
		{notData, []string{notData, "not a weft data directory"}},
	} {
		_, err := ImportDigests(t.Context(), db, tc.src)
		for _, w := range tc.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("import %s: error %v, want one naming %q", tc.src, err, w)
			}
		}
	}
}

// An earlier crawl's captures, imported from a WACZ whose index is gzipped
// and gives SHA-256 digests (as Browsertrix's does) and from a CDXJ with
// SHA-1s (as weft cdx writes), make a copy of their payloads a revisit
// record that refers to them, by URI and date; a new payload is archived
// whole. What is skipped is counted; a source is read once.
func TestRevisitOfEarlierCrawl(t *testing.T) {
	dir := t.TempDir()
	old1, old2, fresh := []byte("a page of the earlier crawl"), []byte("an image of the earlier crawl"), []byte("new")
	s256, s1 := sha256.Sum256(old1), sha1.Sum(old2)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(`test,old)/page 20251001080000 {"url":"http://old.test/page","mime":"text/html","status":200,"digest":"sha256:` + hex.EncodeToString(s256[:]) + `","length":100,"offset":0,"filename":"rec-1.warc.gz"}` + "\n"))
	zw.Close()
	waczPath := filepath.Join(dir, "earlier.wacz")
	writeZip(t, waczPath, map[string][]byte{"indexes/index.cdx.gz": gz.Bytes(), "indexes/index.idx": []byte("!meta 0 {}\n")})
	cdxj := filepath.Join(dir, "earlier.cdxj")
	os.WriteFile(cdxj, []byte(`test,old)/img 20251002090000 {"url":"http://old.test/img","status":"200","digest":"`+DigestString(s1)+`","length":"50","offset":"7","filename":"w.warc.gz"}`+"\n"+
		`test,old)/img2 20251003090000 {"url":"http://old.test/img2","mime":"warc/revisit","digest":"`+DigestString(s1)+`"}`+"\n"), 0o644)

	db := openStore(t)
	w, err := warc.NewWriter(warc.Config{Dir: filepath.Join(dir, "warc"), Software: "weft/test"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	a := New(w, db, canon.New(canon.Config{}), NewOutbox(nil, db, slog.New(slog.DiscardHandler)), nil, false)
	for _, src := range []string{waczPath, cdxj} {
		im, err := a.Import(t.Context(), src)
		if err != nil || im.Digests != 1 {
			t.Fatalf("import %s: %+v, %v; want 1 digest", src, im, err)
		}
		if im.Kind == "cdxj" && im.Skipped != 1 {
			t.Errorf("import %s: %d lines skipped, want the revisit's", src, im.Skipped)
		}
		if again, err := a.Import(t.Context(), src); err != nil || !again.Again || again.Digests != 1 {
			t.Errorf("import %s again: %+v, %v; want it known, not read", src, again, err)
		}
	}

	archive := func(url string, body []byte) (Capture, warc.Stored) {
		t.Helper()
		st := &Staging{Batch: db.NewBatch()}
		resp := &fetch.Response{
			URL: url, StatusCode: 200, Status: "200 OK", Proto: "HTTP/1.1", Header: http.Header{}, Body: body, Start: time.Now(), RemoteAddr: "127.0.0.1:80",
			RequestHeader:  []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"),
			ResponseHeader: []byte("HTTP/1.1 200 OK\r\n\r\n"),
		}
		cp, err := a.Archive(resp, st, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := st.Batch.Commit(false); err != nil {
			t.Fatal(err)
		}
		a.Settle(st)
		// The file being written is still ".open".
		rec, err := warc.ReadRecord(filepath.Join(dir, "warc", cp.Loc.File+".open"), cp.Loc.Offset)
		if err != nil {
			t.Fatal(err)
		}
		return cp, rec
	}
	for _, tc := range []struct {
		url, refersTo, date string
		body                []byte
	}{
		{"http://old.test/page", "http://old.test/page", "2025-10-01T08:00:00Z", old1},
		{"http://new.test/copy", "http://old.test/page", "2025-10-01T08:00:00Z", old1},
		{"http://new.test/img", "http://old.test/img", "2025-10-02T09:00:00Z", old2},
	} {
		cp, rec := archive(tc.url, tc.body)
		date, _ := time.Parse(time.RFC3339Nano, rec.RefersToDate)
		if want, _ := time.Parse(time.RFC3339, tc.date); !cp.Revisit || rec.Type != "revisit" || rec.RefersToURI != tc.refersTo || !date.Equal(want) {
			t.Errorf("%s: a %s record referring to %q at %q; want a revisit of %s at %s", tc.url, rec.Type, rec.RefersToURI, rec.RefersToDate, tc.refersTo, tc.date)
		}
	}
	if cp, rec := archive("http://new.test/fresh", fresh); cp.Revisit || rec.Type != "response" {
		t.Errorf("a new payload: a %s record", rec.Type)
	}
	c := a.Counts()
	if want := int64(2*len(old1) + len(old2)); c.EarlierRevisits != 3 || c.EarlierRevisitBytes != want {
		t.Errorf("counts %+v: want 3 revisits of the earlier crawl, %d bytes", c, want)
	}
	// A crash of this crawl that cut back a file of its own named as the
	// earlier crawl's is (w.warc.gz) does not unmake a revisit of that.
	b := New(w, db, canon.New(canon.Config{}), NewOutbox(nil, db, slog.New(slog.DiscardHandler)), []warc.RecoveredFile{{Name: "w.warc.gz", Removed: true}}, false)
	first, _, _ := db.GetDigest(s1)
	if !b.StillArchived(first) {
		t.Errorf("a capture of the earlier crawl in %s taken for one of this crawl's cut back", first.File)
	}
	srcs, err := DedupSources(db)
	if err != nil || len(srcs) != 2 {
		t.Errorf("DedupSources = %+v, %v; want the two", srcs, err)
	}
}

func openStore(t *testing.T) *store.DB {
	t.Helper()
	db, err := store.Open(store.Dir(t.TempDir()), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func writeZip(t *testing.T, path string, files map[string][]byte) {
	t.Helper()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for name, data := range files {
		fw, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Store})
		if err != nil {
			t.Fatal(err)
		}
		fw.Write(data)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}
