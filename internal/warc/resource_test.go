package warc

import (
	"path/filepath"
	"testing"
)

// A rendered page's DOM is a conversion record that refers to its
// response, and its screenshot a resource record; both strict readers
// read them, with their blocks exact.
func TestResourceRecords(t *testing.T) {
	dir := t.TempDir()
	w, err := NewWriter(Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	ex := pageExchange("http://example.com/app", 0, htmlPage(3, 2_000))
	loc, err := w.WriteExchange(ex)
	if err != nil {
		t.Fatal(err)
	}
	dom := []byte("<!DOCTYPE html>\n<html><body><a href=\"/made-by-script\">x</a></body></html>")
	dloc, err := w.WriteResource(Resource{Type: "conversion", URL: ex.URL, Date: ex.Date, RefersTo: loc.RecordID,
		ContentType: "text/html; charset=utf-8", Block: dom})
	if err != nil {
		t.Fatal(err)
	}
	png := []byte("\x89PNG\r\n\x1a\nnot really")
	if _, err := w.WriteResource(Resource{Type: "resource", URL: "urn:view:" + ex.URL, Date: ex.Date, RefersTo: loc.RecordID, ContentType: "image/png", Block: png}); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []Resource{
		{Type: "response", URL: ex.URL, Date: ex.Date, ContentType: "text/html"},
		{Type: "conversion", URL: "app", Date: ex.Date, ContentType: "text/html"},
		{Type: "conversion", URL: ex.URL, ContentType: "text/html"},
		{Type: "conversion", URL: ex.URL, Date: ex.Date, RefersTo: "x", ContentType: "text/html"},
		{Type: "conversion", URL: ex.URL, Date: ex.Date},
	} {
		if _, err := w.WriteResource(bad); err == nil {
			t.Errorf("record %+v accepted", bad)
		}
	}
	mustClose(t, w)
	path := filepath.Join(dir, loc.File)
	if n, _ := readNlnwaStrict(t, path); n != 5 {
		t.Fatalf("nlnwa read %d records, want warcinfo, request, response, conversion, resource", n)
	}
	recs := readIA(t, path)
	c, r := recs[3], recs[4]
	if c.Header.Get("WARC-Type") != "conversion" || c.Header.Get("WARC-Refers-To") != loc.RecordID || c.Header.Get("WARC-Target-URI") != ex.URL ||
		string(c.Block) != string(dom) || c.Offset != dloc.Offset || c.Size != dloc.Length {
		t.Errorf("conversion record %v at %d+%d (Location %+v), block %q", c.Header, c.Offset, c.Size, dloc, c.Block)
	}
	if r.Header.Get("WARC-Type") != "resource" || r.Header.Get("WARC-Concurrent-To") != loc.RecordID || r.Header.Get("Content-Type") != "image/png" || string(r.Block) != string(png) {
		t.Errorf("resource record %v, block %q", r.Header, r.Block)
	}
}
